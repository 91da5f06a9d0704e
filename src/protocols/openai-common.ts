// What OpenAI's two dialects (Chat Completions and Responses) encode the same way.
import type {
  DocumentBlock,
  ExchangeRequest,
  FileReference,
  ImageSource,
  JsonSchemaFormat,
  ReasoningEffort,
  Thinking,
  Usage,
} from '../exchange/types'
import { effortForBudget } from '../exchange/thinking-budget'
import { type GatewayError, invalidRequest } from '../lib/errors'
import { markUnreported } from './unreported-usage'

/**
 * Anthropic thinking → OpenAI reasoning effort. Adaptive thinking carries its effort as is; a
 * budget maps by claude-code-router's thresholds (≤1024 low, ≤8192 medium, else high).
 */
export function reasoningEffortFor(thinking: Thinking | undefined): ReasoningEffort | undefined {
  if (!thinking || thinking.type === 'disabled') return undefined
  if (thinking.type === 'adaptive') return thinking.effort
  if (thinking.budgetTokens <= 0) return undefined
  return effortForBudget(thinking.budgetTokens)
}

/**
 * OpenAI caps end-user ids (`user`, `safety_identifier`) at 64 characters; Claude Code's
 * metadata.user_id is a longer JSON string, so a long id is replaced by its SHA-256: still stable
 * per user, still opaque.
 */
export const openAIUserId = (user: string): string =>
  user.length <= 64 ? user : new Bun.CryptoHasher('sha256').update(user).digest('hex')

/** What a format is called when the client named none (an Anthropic client never does). */
const defaultSchemaName = 'output'

/**
 * A json_schema format's fields as both OpenAI dialects take them: flat in Responses' text.format,
 * nested under `json_schema` in Chat's response_format. Both require a name. `strict` is sent only
 * when the client chose it: strict mode refuses schemas with optional properties.
 */
export const openAIJsonSchema = (format: JsonSchemaFormat): Record<string, unknown> => ({
  name: format.name ?? defaultSchemaName,
  ...(format.description === undefined ? {} : { description: format.description }),
  schema: format.schema,
  ...(format.strict === undefined ? {} : { strict: format.strict }),
})

/** Inline bytes as OpenAI takes them (image_url, file_data): a base64 data URL. */
export const dataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`

/**
 * A file the client named by its id in its own store at a provider, which the upstream cannot
 * read: the request is refused naming the field, rather than answered without the file.
 */
export const unreadableFileId = (param: string, store: string, instead: string): GatewayError =>
  invalidRequest(`${param} cannot be read here: files live in the client's own ${store} store; send ${instead}`, param)

/** An Anthropic client's Files API reference, on its way to an OpenAI upstream. */
export const unreadableAnthropicFile = (file: FileReference): GatewayError =>
  unreadableFileId(
    file.param,
    'Anthropic',
    'a base64 or url source (this request was routed to a model that is not Claude)',
  )

/** An image as both OpenAI dialects take it: a data URL or a link. */
export const imageUrl = (source: ImageSource): string => {
  switch (source.kind) {
    case 'base64':
      return dataUrl(source.mediaType, source.data)
    case 'url':
      return source.url
    case 'file':
      throw unreadableAnthropicFile(source)
  }
}

/** OpenAI wants a file name beside inline file data; an Anthropic document has a title at most, and is a PDF. */
export const fileNameOf = (document: DocumentBlock): string => document.title ?? 'document.pdf'

/** An Anthropic tool_choice naming its web search server tool, where no function has that name. */
export const forcesWebSearch = (req: ExchangeRequest): boolean =>
  req.webSearch !== undefined &&
  req.toolChoice?.type === 'tool' &&
  req.toolChoice.name === 'web_search' &&
  !req.tools.some((tool) => tool.name === 'web_search')

/** The counts of an OpenAI usage object (Chat's or Responses'), as numbers where it sent numbers. */
export interface OpenAIUsageCounts {
  /** Chat's prompt_tokens, Responses' input_tokens: cache reads and writes included. */
  prompt: number | undefined
  cacheRead: number
  cacheWrite: number
  output: number | undefined
  reasoning: number
}

/**
 * OpenAI usage → the exchange Usage, for both dialects. OpenAI's prompt count includes its cache
 * reads and writes and the exchange's `input` does not, so both are taken off it, unclamped:
 * cached counts larger than the prompt (impossible, OpenAI's cached tokens being part of it) or a
 * negative prompt leave a negative input, which the relay refuses as a count and estimates
 * (relay/credible-usage.ts) rather than billing a free prompt or the cached counts as they stand.
 * Without a numeric prompt or output count the usage is unreported (unreported-usage.ts).
 */
export function openAIUsage(counts: OpenAIUsageCounts): Usage {
  const { prompt, cacheRead, cacheWrite, output, reasoning } = counts
  // With no prompt count its cached parts mean nothing alone: the prompt is estimated whole.
  if (prompt === undefined)
    return markUnreported({ input: 0, cacheRead: 0, cacheWrite: 0, output: output ?? 0, reasoning })
  const usage = { input: prompt - cacheRead - cacheWrite, cacheRead, cacheWrite, output: output ?? 0, reasoning }
  return output === undefined ? markUnreported(usage) : usage
}

/** Keywords OpenAI's strict mode refuses (its structured-outputs docs: "not permitted"). */
const notInStrictMode = [
  'allOf',
  'oneOf',
  'not',
  'patternProperties',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'default',
]
/** OpenAI's limits for a strict schema: object properties in all, and levels of nesting. */
const strictLimits = { properties: 5_000, depth: 10 }

/**
 * Whether a tool's schema is one OpenAI's strict mode takes: its root an object, every object
 * closed (`additionalProperties: false`) with exactly its properties required, every subschema
 * typed (`type`, `anyOf`, `$ref`, `enum` or `const`), no keyword strict mode refuses, and within
 * its limits. Anthropic's strict tools allow optional properties, `allOf` and defaults, which
 * OpenAI refuses with a 400: such a tool goes unstrict rather than fail the request. Linear in
 * the schema's size (a tool of 100,000 properties is a client's to send).
 */
export function takesStrictMode(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false
  const root = schema as Record<string, unknown>
  const seen = { properties: 0 }
  return isObjectSchema(root) && strictBelow(root, 0, seen)
}

const isObjectSchema = (node: Record<string, unknown>): boolean =>
  node.type === 'object' ||
  (Array.isArray(node.type) && node.type.includes('object')) ||
  (node.properties !== null && typeof node.properties === 'object')

const typingKeywords = ['type', 'anyOf', '$ref', 'enum', 'const']

function strictBelow(schema: unknown, depth: number, seen: { properties: number }): boolean {
  if (Array.isArray(schema)) return schema.every((item) => strictBelow(item, depth, seen))
  // A boolean schema (`true`) or a stray value where a schema belongs is no typed schema.
  if (schema === null || typeof schema !== 'object') return false
  const node = schema as Record<string, unknown>
  if (depth > strictLimits.depth) return false
  if (!typingKeywords.some((keyword) => keyword in node)) return false
  if (notInStrictMode.some((keyword) => keyword in node)) return false
  if (isObjectSchema(node)) {
    if (node.additionalProperties !== false) return false
    const names = node.properties !== null && typeof node.properties === 'object' ? Object.keys(node.properties) : []
    const required = new Set(Array.isArray(node.required) ? node.required : [])
    // Exactly its properties: none optional, none required that is not there.
    if (required.size !== names.length || !names.every((name) => required.has(name))) return false
    seen.properties += names.length
    if (seen.properties > strictLimits.properties) return false
  }
  const maps = ['properties', '$defs', 'definitions'].every((key) => {
    const map = node[key]
    if (map === undefined) return true
    if (map === null || typeof map !== 'object') return false
    // Definitions are not a level of nesting; properties are.
    const below = key === 'properties' ? depth + 1 : depth
    return Object.values(map).every((child) => strictBelow(child, below, seen))
  })
  return (
    maps &&
    ['items', 'prefixItems', 'anyOf'].every((key) => node[key] === undefined || strictBelow(node[key], depth, seen))
  )
}
