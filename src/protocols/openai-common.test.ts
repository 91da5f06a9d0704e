import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { encodeChatRequest } from './openai-chat/encode-chat-request'
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
