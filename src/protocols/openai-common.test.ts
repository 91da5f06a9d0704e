import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { encodeChatRequest } from './openai-chat/encode-chat-request'
import { takesStrictMode } from './openai-common'
import { encodeResponsesRequest } from './openai-responses/encode-responses-request'

const request = (messages: ExchangeRequest['messages']): ExchangeRequest => ({
  system: [],
  messages,
  tools: [],
  maxTokens: 64,
  stream: false,
})

const encoders = [
  ['Chat', (req: ExchangeRequest) => encodeChatRequest(req, 'm')],
  ['Responses', (req: ExchangeRequest) => encodeResponsesRequest(req, 'm')],
] as const

const imageParam = 'messages.0.content.1.source.file_id'
const documentParam = 'messages.2.content.0.content.0.source.file_id'
const withFiles: [string, ExchangeRequest['messages'], string][] = [
  [
    'an image',
    [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { kind: 'file', fileId: 'file_1', param: imageParam } },
        ],
      },
    ],
    imageParam,
  ],
  [
    'a document in a tool result',
    [
      { role: 'user', content: [{ type: 'text', text: 'Fetch it.' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'call_1',
            content: [{ type: 'document', source: { kind: 'file', fileId: 'file_2', param: documentParam } }],
          },
        ],
      },
    ],
    documentParam,
  ],
]

describe('OpenAI encoders and Anthropic Files API references', () => {
  for (const [dialect, encode] of encoders) {
    test.each(withFiles)(`${dialect}: a reference in %s is a 400 naming it`, (_, messages, param) => {
      expect(() => encode(request(messages))).toThrow(GatewayError)
      expect(() => encode(request(messages))).toThrow(
        expect.objectContaining({ kind: 'invalid_request', status: 400, retryable: false, param }),
      )
    })
  }
})

describe('takesStrictMode: the schemas OpenAI strict mode takes', () => {
  const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    ...extra,
  })
  test.each<[string, unknown, boolean]>([
    ['a closed object, every property required', closed({ a: { type: 'string' } }), true],
    [
      'nested objects, arrays of objects, $defs and anyOf, all closed',
      closed(
        {
          list: { type: 'array', items: closed({ n: { type: 'number' } }) },
          either: { anyOf: [{ type: 'string' }, closed({ x: { type: 'null' } })] },
          ref: { $ref: '#/$defs/thing' },
        },
        { $defs: { thing: closed({ y: { type: 'boolean' } }) } },
      ),
      true,
    ],
    ['a nullable closed object (a type list)', closed({ a: { type: 'string' } }, { type: ['object', 'null'] }), true],
    [
      'an optional property',
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      false,
    ],
    ['an open object', { type: 'object', properties: {} }, false],
    ['an open object in a type list', { type: ['object', 'null'], properties: {} }, false],
    ['allOf (Anthropic takes it, OpenAI does not)', closed({ a: { allOf: [{ type: 'string' }] } }), false],
    ['oneOf', closed({ a: { oneOf: [{ type: 'string' }, { type: 'number' }] } }), false],
    ['not', closed({ a: { not: { type: 'string' } } }), false],
    ['patternProperties', closed({}, { patternProperties: { '^x': { type: 'string' } } }), false],
    ['an open object in prefixItems', closed({ t: { type: 'array', prefixItems: [{ type: 'object' }] } }), false],
    ['a root that is no object', { anyOf: [closed({})] }, false],
    ['a boolean schema where a schema belongs', closed({ a: true, list: { type: 'array', items: true } }), false],
    ['a default (pydantic and zod write them)', closed({ a: { type: 'string', default: 'x' } }), false],
    ['a property with no type', closed({ a: { description: 'anything' } }), false],
    ['a required key that is no property', closed({ a: { type: 'string' } }, { required: ['a', 'b'] }), false],
    [
      'more than 10 levels of nesting',
      Array.from({ length: 11 }).reduce((inner) => closed({ x: inner }), closed({})),
      false,
    ],
    [
      'more than 5,000 properties',
      closed(Object.fromEntries(Array.from({ length: 5_001 }, (_, i) => [`p${i}`, { type: 'string' }]))),
      false,
    ],
  ])('%s: %p', (_, schema, strict) => {
    expect(takesStrictMode(schema)).toBe(strict)
  })

  // required.includes for every property took 37 s of the event loop at 100,000 properties.
  test('in time proportional to the schema: 100,000 properties (past the limit: not strict)', () => {
    const properties = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`p${i}`, { type: 'string' }]))
    const started = performance.now()
    expect(takesStrictMode(closed(properties))).toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
