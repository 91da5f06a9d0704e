// The OpenAPI 3.1 description of every HTTP route, written by hand from the route files and the
// ledger views, and served at GET /openapi.json. openapi.test.ts fails when a route goes undocumented.
import { Elysia } from 'elysia'
import {
  deviceCodeLifetimeSeconds,
  maxWaitingDeviceCodes,
  wrongCodeBurst,
  wrongCodesPerSecond,
} from '../accounts/device-login'
import { scopeCostTypes } from '../ledger/credit'
import { AnthropicCountTokensBody, AnthropicMessagesBody } from '../protocols/anthropic/schema'
import { ResponsesBody } from '../protocols/openai-responses/schema'
import { profileNames } from '../router/profiles'
import { spendBuckets, spendGroups, spendLimits } from './spend'
import { feedbackReasons, usageLimits } from './usage'

// The API contract's version (routing-gateway-api.md, Versioning), not the package's.
const interfaceVersion = '1.0.0'

// Light types of our own: openapi-types' 3.1 typings mix in 3.0 schema types and reject valid 3.1.
type Json = { [key: string]: unknown }
type Schema = Json
type Ref = { $ref: string; description?: string }
type Parameter = (Json & { name: string; in: 'query' | 'header' | 'path'; required: boolean }) | Ref
type Responses = Record<string, Json>
type SecurityRequirement = Record<string, string[]>
export interface Operation {
  operationId: string
  tags: string[]
  summary: string
  description?: string
  security: SecurityRequirement[]
  parameters?: Parameter[]
  requestBody?: Json
  responses: Responses
}
export type PathItem = Partial<Record<'get' | 'put' | 'post' | 'delete' | 'patch' | 'head', Operation>>
type Paths = Record<string, PathItem>
export interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string; summary?: string; description?: string }
  servers: { url: string; description?: string }[]
  tags: { name: string; description?: string }[]
  paths: Paths
  components: Record<string, Record<string, Json>>
}

const ref = (name: string, description?: string): Ref => ({
  $ref: `#/components/schemas/${name}`,
  ...(description ? { description } : {}),
})
const json = (schema: Schema | Ref) => ({ 'application/json': { schema } })
const arrayOf = (items: Schema | Ref, description?: string): Schema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
})
const nullable = (type: 'string' | 'integer' | 'number', extra: Partial<Schema> = {}): Schema => ({
  type: [type, 'null'],
  ...extra,
})
const profileWindow =
  "the largest context window among the models the profile can route the caller's account to today: a key for the provider (the platform's or the account's own), a known price, not retired (null with none). A prompt over it is refused"
const profileOutput = 'the largest output among those models (null with none)'
const dateTime = (description?: string): Schema => ({
  type: 'string',
  format: 'date-time',
  ...(description ? { description } : {}),
})
const nanos = (description: string) => ref('Nanos', description)
const tokens = (description?: string): Schema => ({
  type: 'integer',
  minimum: 0,
  ...(description ? { description } : {}),
})
/** Every listed property is always present. */
const object = (
  properties: Record<string, Schema | Ref>,
  optional: string[] = [],
  extra: Partial<Schema> = {},
): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  ...extra,
})

/** A TypeBox schema as plain JSON Schema: TypeBox's symbol keys are dropped, the rest is kept as is. */
const plain = (schema: unknown): Schema => JSON.parse(JSON.stringify(schema)) as Schema

const profiles = Object.keys(profileNames)
const routingModes = [...new Set(Object.values(profileNames))]

// Error responses. The messages, usage, admin and sign-in routes answer in Anthropic's shape; the
// responses route in OpenAI's, with 529 sent as 503 (OpenAI's SDKs retry 503 and know no 529), and
// what no resend can fix there as a 400 or OpenAI's own 429 insufficient_quota (Codex retries every
// 5xx and a 402 whatever x-should-retry says). An upstream's own error reaches the client with the
// status its dialect pairs with it (README, HTTP API).
type Shape = 'Anthropic' | 'OpenAI'
/** A body over this on a route other than the model routes is a 413 (app.ts, smallBodyBytes). */
const smallBodyBytes = 64 * 1024
const tooLarge =
  `request_too_large: the body is larger than [server] max_body_bytes, or, on a usage, admin or sign-in ` +
  `route, larger than ${smallBodyBytes / 1024} KB (${smallBodyBytes.toLocaleString('en')} bytes)`
const anthropicStatuses: Record<number, string> = {
  400:
    'invalid_request_error: the body or a parameter is wrong (the message names it). On the messages route also: ' +
    'the prompt fits no model under the profile ("prompt is too long: …"), the request needs what no model ' +
    "under the profile can serve (files stored with Anthropic, a tool only Anthropic's API has: one the client " +
    'runs such as bash, or one Anthropic runs such as web fetch, tool search or the MCP connector), or ' +
    "an upstream's own 400, 422 or 501; x-should-retry: false where the same request cannot succeed",
  401: 'authentication_error: missing, unknown or revoked API key (or admin token)',
  402: 'billing_error: no credit grant covers this request; x-should-retry: false',
  403:
    'permission_error: on the admin routes, the admin API is off ([server] admin_token_env names an unset ' +
    "variable); on the messages route, an upstream's refusal of something the request referenced (a file)",
  404:
    'not_found_error: no such route, model, request, key or account (the message names it); on the messages ' +
    "route, an upstream's refusal of something the request referenced (a file_id its store does not hold)",
  405: 'invalid_request_error: wrong method for this path; the Allow header lists the right one',
  409:
    'invalid_request_error: on feedback, the request is still running (rate it once it has ended); on the ' +
    "messages route, an upstream's own 409, kept (the SDKs retry it)",
  413: tooLarge,
  415: 'invalid_request_error: a compressed body (Content-Encoding other than identity): send it uncompressed',
  425: "invalid_request_error: an upstream's own 425 (too early), kept (the SDKs retry it)",
  429:
    "rate_limit_error: an upstream is rate limiting (the platform's key: said in svc's words), or the " +
    "account's remaining credit is held by its requests in flight (Retry-After: 1)",
  500:
    "api_error: a fault in the gateway (X-Request-Id names its log line), or an upstream's own api_error, or " +
    'its 5xx other than 501 (a 400), 502, 503, 504 and 529',
  502:
    'api_error: an upstream is unreachable, redirected, answered with something that is not a valid answer, ' +
    "or refused the provider account svc used there (its key or its credit: the operator's to fix; the " +
    "caller's key is fine); x-should-retry: false when every candidate's provider account failed",
  503:
    'api_error: no model can serve this request under the profile (the reasons are in the message; ' +
    "x-should-retry: false; never overloaded_error, which Claude Code retries for minutes), or svc's " +
    'database refuses writes (Retry-After)',
  504: 'timeout_error: an upstream sent nothing within [routing] first_byte_timeout_ms, or answered 408 or 504',
  529:
    'overloaded_error: an upstream is overloaded (its own 502, 503 or 529), or the requests in flight fill ' +
    "svc's memory budget ([server] request_memory_mb; Retry-After: 1)",
}
const openAIStatuses: Record<number, string> = {
  400:
    'invalid_request_error (param names the field), with code context_length_exceeded when the prompt fits no ' +
    "model under the profile; an upstream's own 400, 422 or 501 too. server_error (code server_error) for " +
    'what the same request sent again cannot fix: no model can serve it under the profile (the reasons are ' +
    "in the message). invalid_request_error for a tool only OpenAI's Responses API has (local_shell, " +
    'apply_patch, remote mcp…) where the profile has no model of OpenAI itself. server_error also where ' +
    "every candidate's provider refused the platform's key or account there (the " +
    "operator's to fix). x-should-retry: false where the same request sent again cannot succeed",
  401: 'invalid_request_error, code invalid_api_key',
  403: "permission_error: an upstream's refusal of something the request referenced (a file)",
  404:
    'invalid_request_error: no such route, model (the message lists the profiles) or stored response; on ' +
    "POST /v1/responses, an upstream's refusal of something the request referenced (an item, a file)",
  405: 'invalid_request_error, code method_not_allowed; the Allow header lists the right method',
  409: "invalid_request_error: an upstream's own 409, kept (the SDKs retry it)",
  413: 'invalid_request_error, code request_too_large: the body is larger than [server] max_body_bytes',
  415: 'invalid_request_error: a compressed body (Content-Encoding other than identity): send it uncompressed',
  425: "invalid_request_error: an upstream's own 425 (too early), kept (the SDKs retry it)",
  429:
    "rate_limit_error, code rate_limit_exceeded: an upstream is rate limiting, or the account's remaining " +
    'credit is held by its requests in flight (Retry-After: 1). insufficient_quota (type and code): no ' +
    'credit grant covers this request; x-should-retry: false',
  500:
    "server_error: a fault in the gateway, or an upstream's own api_error, or its 5xx other than 501 (a 400), " +
    '502, 503, 504 and 529',
  502:
    'server_error: an upstream is unreachable, redirected, or answered with something that is not a valid ' +
    "answer; or a provider refused the platform's key while a candidate was left untried",
  503:
    'server_error, code server_overloaded: an upstream is overloaded (its own 502, 503 or 529), or the ' +
    "requests in flight fill svc's memory budget ([server] request_memory_mb; Retry-After: 1); code " +
    "server_error: svc's database refuses writes (Retry-After)",
  504: 'server_error, code timeout: an upstream sent nothing within [routing] first_byte_timeout_ms, or answered 408 or 504',
}

const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` })
/** The routed request's id, by surface: the Anthropic SDK reads `request-id`, the OpenAI SDK `x-request-id`. */
const requestIdHeaders: Record<Shape, Record<string, Ref>> = {
  Anthropic: { 'X-Request-Id': headerRef('X-Request-Id'), 'request-id': headerRef('request-id') },
  OpenAI: { 'X-Request-Id': headerRef('X-Request-Id') },
}
/** Refused before any routing, whatever the route: never with a request id. */
const neverRouted = new Set([401, 405])
/** Where svc sends `x-should-retry: false` (README, HTTP API). */
const permanentStatuses: Record<Shape, Set<number>> = {
  Anthropic: new Set([400, 402, 502, 503]),
  OpenAI: new Set([400, 429]),
}
/** Where a Retry-After may come with the error. */
const waitStatuses = new Set([429, 503, 529])

/** The headers an error response of this shape and status may carry. */
function errorHeaders(shape: Shape, status: number): Record<string, Ref> {
  return {
    ...(neverRouted.has(status) ? {} : requestIdHeaders[shape]),
    ...(permanentStatuses[shape].has(status) ? { 'x-should-retry': headerRef('x-should-retry') } : {}),
    ...(waitStatuses.has(status) ? { 'Retry-After': headerRef('Retry-After') } : {}),
    ...(status === 405 ? { Allow: headerRef('Allow') } : {}),
  }
}

function errorResponse(
  shape: Shape,
  status: number,
  description: string,
  headers: Record<string, Ref> = errorHeaders(shape, status),
): Json {
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: json(ref(`${shape}Error`)),
  }
}

const errors = (shape: Shape, statuses: number[]): Responses =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/${shape}${s}` }]))
const anthropicErrors = (...statuses: number[]) => errors('Anthropic', statuses)

/** An upstream's refusal of what the request referenced (403, 404) and its 409 and 425, passed on. */
const upstreamKept = [403, 404, 409, 425]
/** What the model routes answer besides their 200: the messages route, and the responses route. */
const messagesErrors = anthropicErrors(400, 401, 402, ...upstreamKept, 405, 413, 415, 429, 500, 502, 503, 504, 529)
const responsesErrors = errors('OpenAI', [400, 401, ...upstreamKept, 405, 413, 415, 429, 500, 502, 503, 504])

// Security requirements, by surface.
const modelKey: SecurityRequirement[] = [{ apiKeyBearer: [] }, { apiKeyHeader: [] }]
const bearerKey: SecurityRequirement[] = [{ apiKeyBearer: [] }]
const admin: SecurityRequirement[] = [{ adminBearer: [] }]
const open: SecurityRequirement[] = []

const param = (name: string): Ref => ({ $ref: `#/components/parameters/${name}` })
const idPath = (description: string): Parameter => ({
  name: 'id',
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
})
const limitQuery = (bounds: { min: number; max: number; fallback: number }, what: string): Parameter => ({
  name: 'limit',
  in: 'query',
  required: false,
  description: `${what}; from ${bounds.min} to ${bounds.max}, default ${bounds.fallback}. Out of bounds is a 400.`,
  schema: { type: 'integer', minimum: bounds.min, maximum: bounds.max, default: bounds.fallback },
})
const accountQuery = (required: boolean): Parameter => ({
  name: 'account',
  in: 'query',
  required,
  description: 'account name or id',
  schema: { type: 'string' },
})

const sessionHeaders = ['SessionId', 'AgentId', 'SessionSource'].map(param)

const sseStream = (description: string) => ({
  'text/event-stream': { schema: { type: 'string', description } satisfies Schema },
})

// The messages surface at /compat-a and its alias /anthropic: the same routes under either prefix.
function messagesPaths(prefix: string, alias: boolean): Paths {
  const id = (name: string) => (alias ? `${name}ViaAnthropicPrefix` : name)
  const tags = ['messages']
  const note = alias ? ' Alias of the same route under /compat-a.' : ''
  const versionHeaders = [param('AnthropicVersion'), param('CompatVersion')]
  return {
    [prefix]: {
      head: {
        operationId: id('probeMessagesBase'),
        tags,
        summary: 'Base URL probe',
        description: `200 with an empty body, no key needed (Claude Code probes the base URL).${note}`,
        security: open,
        responses: { '200': { description: 'the gateway is here' } },
      },
    },
    [`${prefix}/v1/messages`]: {
      post: {
        operationId: id('createMessage'),
        tags,
        summary: 'Anthropic Messages, routed behind a profile',
        description:
          '`model` names a routing profile; the gateway ranks the models behind it, sends the request to the best, ' +
          'and falls back down the ranking when one fails before the first byte. Needs `anthropic-version` or ' +
          '`x-compat-version`. The message id is `msg_<request id>`; `model` in the answer is the concrete upstream ' +
          'model that answered. After the first streamed byte a failure is an `error` event, not a status.' +
          note,
        security: modelKey,
        parameters: [
          ...versionHeaders,
          param('AnthropicBeta'),
          ...sessionHeaders,
          {
            name: 'beta',
            in: 'query',
            required: false,
            description: "accepted and ignored (Anthropic's SDK adds it to beta calls)",
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: true, content: json(ref('MessagesRequest')) },
        responses: {
          '200': {
            description: 'the message, or with `stream: true` its SSE stream',
            headers: requestIdHeaders.Anthropic,
            content: {
              ...json(ref('AnthropicMessage')),
              ...sseStream(
                'Anthropic SSE: message_start, then per content block content_block_start / content_block_delta… / ' +
                  'content_block_stop, then message_delta (stop_reason and cumulative usage) and message_stop; `ping` ' +
                  'frames may appear; a failure after the first byte is an `error` event.',
              ),
            },
          },
          ...messagesErrors,
        },
      },
    },
    [`${prefix}/v1/messages/count_tokens`]: {
      post: {
        operationId: id('countMessageTokens'),
        tags,
        summary: 'Count the input tokens of a messages request',
        description:
          'Asked of an Anthropic upstream of the profile when there is one (exact for Claude), else counted with a ' +
          'BPE tokenizer (o200k). Never 0. Needs `anthropic-version` or `x-compat-version`.' +
          note,
        security: modelKey,
        parameters: [...versionHeaders, param('AnthropicBeta')],
        requestBody: { required: true, content: json(ref('CountTokensRequest')) },
        responses: {
          '200': { description: 'the count', content: json(object({ input_tokens: tokens() })) },
          ...anthropicErrors(400, 401, 405, 413),
        },
      },
    },
    [`${prefix}/v1/models`]: {
      get: {
        operationId: id('listModels'),
        tags,
        summary: "The routing profiles, in Anthropic's models list shape",
        description: `Pages with \`limit\` and \`after_id\` or \`before_id\`.${note}`,
        security: modelKey,
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'from 1 to 1000, default 20',
            schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 },
          },
          { name: 'after_id', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'before_id', in: 'query', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'a page of models', content: json(ref('ModelList')) },
          ...anthropicErrors(400, 401, 405),
        },
      },
    },
    [`${prefix}/v1/models/{id}`]: {
      get: {
        operationId: id('getModel'),
        tags,
        summary: 'One routing profile',
        ...(alias ? { description: note.trim() } : {}),
        security: modelKey,
        parameters: [idPath('a routing profile name')],
        responses: {
          '200': { description: 'the model', content: json(ref('Model')) },
          ...anthropicErrors(401, 404, 405),
        },
      },
    },
  }
}

// The responses surface at /compat-b and its alias /openai.
function responsesPaths(prefix: string, alias: boolean): Paths {
  const id = (name: string) => (alias ? `${name}ViaOpenAIPrefix` : name)
  const tags = ['responses']
  const note = alias ? ' Alias of the same route under /compat-b.' : ''
  return {
    [prefix]: {
      head: {
        operationId: id('probeResponsesBase'),
        tags,
        summary: 'Base URL probe',
        description: `200 with an empty body, no key needed.${note}`,
        security: open,
        responses: { '200': { description: 'the gateway is here' } },
      },
    },
    [`${prefix}/v1/responses`]: {
      post: {
        operationId: id('createResponse'),
        tags,
        summary: 'OpenAI Responses, routed behind a profile',
        description:
          'Stateless: `previous_response_id` is refused with a 400 (send the whole conversation in `input`). Ids are ' +
          '`resp_<request id>` and `msg_<request id>`; `model` in the answer is the profile sent. Without ' +
          "`max_output_tokens` the model's own output limit applies. Errors are in OpenAI's shape." +
          note,
        security: bearerKey,
        parameters: sessionHeaders,
        requestBody: { required: true, content: json(ref('ResponsesRequest')) },
        responses: {
          '200': {
            description: 'the response, or with `stream: true` its SSE stream',
            headers: requestIdHeaders.OpenAI,
            content: {
              ...json(ref('OpenAIResponse')),
              ...sseStream(
                'Responses SSE, each data object with `type` and an increasing `sequence_number`: response.created, ' +
                  'response.in_progress, response.output_item.added, response.content_part.added, ' +
                  'response.output_text.delta… (and response.output_text.annotation.added for a cited page), ' +
                  'response.output_text.done, response.content_part.done, ' +
                  'response.output_item.done, then response.completed (or response.incomplete / response.failed); a ' +
                  'failure after the first byte is an `error` event and response.failed.',
              ),
            },
          },
          ...responsesErrors,
        },
      },
    },
    [`${prefix}/v1/models`]: {
      get: {
        operationId: id('listOpenAIModels'),
        tags,
        summary: "The routing profiles, in OpenAI's models list shape",
        description: `One page, not paginated, as OpenAI's own list is.${note}`,
        security: bearerKey,
        responses: {
          '200': { description: 'every model', content: json(ref('OpenAIModelList')) },
          ...errors('OpenAI', [401, 405]),
        },
      },
    },
    [`${prefix}/v1/models/{id}`]: {
      get: {
        operationId: id('getOpenAIModel'),
        tags,
        summary: 'One routing profile',
        ...(alias ? { description: note.trim() } : {}),
        security: bearerKey,
        parameters: [idPath('a routing profile name')],
        responses: {
          '200': { description: 'the model', content: json(ref('OpenAIModel')) },
          ...errors('OpenAI', [401, 404, 405]),
        },
      },
    },
    ...statelessRefusals(prefix, id, note),
  }
}

/**
 * OpenAI's calls on a stored response, and the two endpoints beside `POST /v1/responses` svc does
 * not serve: each a 404 that says why (the SDK's methods exist; "no route" would not tell).
 */
function statelessRefusals(prefix: string, id: (name: string) => string, note: string): Paths {
  const refusal = (operationId: string, summary: string, withId: boolean) => ({
    operationId: id(operationId),
    tags: ['responses'],
    summary,
    description: `Always 404: svc stores no responses and serves no other Responses endpoint.${note}`,
    security: bearerKey,
    ...(withId ? { parameters: [idPath('a response id')] } : {}),
    responses: errors('OpenAI', [401, 404]),
  })
  return {
    [`${prefix}/v1/responses/input_tokens`]: {
      post: refusal('countResponseInputTokens', 'Not served: count input tokens', false),
    },
    [`${prefix}/v1/responses/compact`]: { post: refusal('compactResponse', 'Not served: compaction', false) },
    [`${prefix}/v1/responses/{id}`]: {
      get: refusal('retrieveResponse', 'Not kept: a stored response', true),
      delete: refusal('deleteResponse', 'Not kept: delete a stored response', true),
    },
    [`${prefix}/v1/responses/{id}/cancel`]: {
      post: refusal('cancelResponse', 'Not kept: cancel a background response', true),
    },
    [`${prefix}/v1/responses/{id}/input_items`]: {
      get: refusal('listResponseInputItems', "Not kept: a stored response's input items", true),
    },
  }
}

const usagePaths: Paths = {
  '/v1/usage': {
    get: {
      operationId: 'getUsage',
      tags: ['usage'],
      summary: 'Credit position, active grants and the most recent usage events',
      description: 'Never behind the quota gate: an account with no credit can still see why.',
      security: bearerKey,
      parameters: [limitQuery(usageLimits.usage, 'how many recent usage events')],
      responses: {
        '200': { description: 'the usage summary', content: json(ref('UsageSummary')) },
        ...anthropicErrors(400, 401),
      },
    },
  },
  '/v1/usage/requests': {
    get: {
      operationId: 'listRequests',
      tags: ['usage'],
      summary: 'Request history, newest first',
      description:
        'To page, pass `created_at` and `request_id` of the last item as `before` and `before_id`: a keyset cursor, ' +
        'so requests sharing a millisecond are neither lost nor repeated. The two go together.',
      security: bearerKey,
      parameters: [
        limitQuery(usageLimits.requests, 'page size'),
        {
          name: 'before',
          in: 'query',
          required: false,
          description: 'RFC 3339 timestamp with a time zone: `created_at` of the last item of the previous page',
          schema: { type: 'string', format: 'date-time' },
        },
        {
          name: 'before_id',
          in: 'query',
          required: false,
          description: '`request_id` of the last item of the previous page',
          schema: { type: 'string' },
        },
        {
          name: 'session_id',
          in: 'query',
          required: false,
          description: 'only this session',
          schema: { type: 'string' },
        },
        {
          name: 'status',
          in: 'query',
          required: false,
          description: 'only requests that ended so',
          schema: { type: 'string', enum: ['completed', 'failed', 'aborted'] },
        },
        {
          name: 'model',
          in: 'query',
          required: false,
          description: 'only requests this model served (its catalog id, `selected_model_id`)',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': { description: 'a page of requests', content: json(ref('RequestPage')) },
        ...anthropicErrors(400, 401),
      },
    },
  },
  '/v1/usage/requests/{id}': {
    get: {
      operationId: 'getRequest',
      tags: ['usage'],
      summary: 'One request: economics, candidate ranking, legs, grant charges, feedback',
      security: bearerKey,
      parameters: [idPath('the `X-Request-Id` of a model response')],
      responses: {
        '200': { description: 'the request record', content: json(ref('RequestDetail')) },
        ...anthropicErrors(401, 404),
      },
    },
  },
  '/v1/usage/requests/{id}/feedback': {
    post: {
      operationId: 'addFeedback',
      tags: ['usage'],
      summary: 'Rate a request',
      description: "At least one of rating, reason and comment. Ratings nudge this account's future rankings.",
      security: bearerKey,
      parameters: [idPath('the `X-Request-Id` of a model response')],
      requestBody: { required: true, content: json(ref('FeedbackRequest')) },
      responses: {
        '201': { description: 'the feedback as stored', content: json(ref('Feedback')) },
        ...anthropicErrors(400, 401, 404, 405, 409, 413, 415),
      },
    },
  },
  '/v1/usage/sessions': {
    get: {
      operationId: 'getSessions',
      tags: ['usage'],
      summary: 'Totals of the named sessions',
      description: 'Unknown ids are left out of the answer.',
      security: bearerKey,
      parameters: [
        {
          name: 'ids',
          in: 'query',
          required: true,
          description: `comma-separated session ids, at most ${usageLimits.sessionIds} (duplicates count once)`,
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'the known sessions',
          content: json(object({ items: arrayOf(ref('Session')) })),
        },
        ...anthropicErrors(400, 401),
      },
    },
  },
  '/v1/usage/sessions/list': {
    get: {
      operationId: 'listSessions',
      tags: ['usage'],
      summary: 'Sessions, most recent activity first',
      description:
        'To page, pass `latest_at` and `session_id` of the last item as `before` and `before_id` (a keyset cursor).',
      security: bearerKey,
      parameters: [
        limitQuery(usageLimits.sessionsList, 'how many sessions'),
        {
          name: 'before',
          in: 'query',
          required: false,
          description: 'RFC 3339 timestamp with a time zone: `latest_at` of the last item of the previous page',
          schema: { type: 'string', format: 'date-time' },
        },
        {
          name: 'before_id',
          in: 'query',
          required: false,
          description: '`session_id` of the last item of the previous page',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': { description: 'the sessions', content: json(arrayOf(ref('Session'))) },
        ...anthropicErrors(400, 401),
      },
    },
  },
}

const adminErrors = (...statuses: number[]) => anthropicErrors(401, 403, ...statuses)
/** A POST's body over 64 KB is a 413, as on every route but the model routes; a compressed one a 415. */
const adminPostErrors = (...statuses: number[]) => adminErrors(413, 415, ...statuses)
const adminNote = 'Needs the admin token; 403 while [server] admin_token_env names an unset variable (the API is off).'

const adminPaths: Paths = {
  '/v1/admin/accounts': {
    get: {
      operationId: 'adminListAccounts',
      tags: ['admin'],
      summary: 'All accounts',
      description: adminNote,
      security: admin,
      responses: { '200': { description: 'the accounts', content: json(arrayOf(ref('Account'))) }, ...adminErrors() },
    },
    post: {
      operationId: 'adminCreateAccount',
      tags: ['admin'],
      summary: 'Create an account (with no credit: add a grant)',
      description: adminNote,
      security: admin,
      requestBody: {
        required: true,
        content: json(
          object({
            name: {
              type: 'string',
              description: '1–64 characters of letters, digits, . _ @ -, starting with a letter or digit',
            },
          }),
        ),
      },
      responses: {
        '201': { description: 'the account', content: json(ref('Account')) },
        ...adminPostErrors(400),
      },
    },
  },
  '/v1/admin/keys': {
    get: {
      operationId: 'adminListKeys',
      tags: ['admin'],
      summary: 'API keys, of one account or all',
      description: adminNote,
      security: admin,
      parameters: [accountQuery(false)],
      responses: { '200': { description: 'the keys', content: json(arrayOf(ref('ApiKey'))) }, ...adminErrors(404) },
    },
    post: {
      operationId: 'adminCreateKey',
      tags: ['admin'],
      summary: 'Issue an API key; the key is in this answer and nowhere else',
      description: adminNote,
      security: admin,
      requestBody: {
        required: true,
        content: json(
          object({ account: { type: 'string', description: 'account name or id' }, name: { type: 'string' } }, [
            'name',
          ]),
        ),
      },
      responses: {
        '201': { description: 'the key record and the key', content: json(ref('CreatedApiKey')) },
        ...adminPostErrors(400, 404),
      },
    },
  },
  '/v1/admin/keys/{id}/revoke': {
    post: {
      operationId: 'adminRevokeKey',
      tags: ['admin'],
      summary: 'Revoke an API key; it stops working at once',
      description: adminNote,
      security: admin,
      parameters: [idPath('the key id')],
      responses: { '200': { description: 'the revoked key', content: json(ref('ApiKey')) }, ...adminPostErrors(404) },
    },
  },
  '/v1/admin/grants': {
    get: {
      operationId: 'adminListGrants',
      tags: ['admin'],
      summary: "An account's grants, expired ones included",
      description: adminNote,
      security: admin,
      parameters: [accountQuery(true)],
      responses: {
        '200': { description: 'the grants', content: json(arrayOf(ref('Grant'))) },
        ...adminErrors(400, 404),
      },
    },
    post: {
      operationId: 'adminAddGrant',
      tags: ['admin'],
      summary: 'Add a credit grant',
      description: adminNote,
      security: admin,
      requestBody: { required: true, content: json(ref('GrantRequest')) },
      responses: { '201': { description: 'the grant', content: json(ref('Grant')) }, ...adminPostErrors(400, 404) },
    },
  },
  '/v1/admin/usage': {
    get: {
      operationId: 'adminGetUsage',
      tags: ['admin'],
      summary: "An account's usage summary, as GET /v1/usage shows it to the account",
      description: adminNote,
      security: admin,
      parameters: [accountQuery(true), limitQuery(usageLimits.usage, 'how many recent usage events')],
      responses: {
        '200': { description: 'the usage summary', content: json(ref('UsageSummary')) },
        ...adminErrors(400, 404),
      },
    },
  },
  '/v1/admin/provider-keys': {
    get: {
      operationId: 'adminListProviderKeys',
      tags: ['admin'],
      summary: "Accounts' own provider keys (BYOK), of one account or all; only a hint of each key is shown",
      description: adminNote,
      security: admin,
      parameters: [accountQuery(false)],
      responses: {
        '200': { description: 'the provider keys', content: json(arrayOf(ref('ProviderKey'))) },
        ...adminErrors(404),
      },
    },
    post: {
      operationId: 'adminAddProviderKey',
      tags: ['admin'],
      summary: "Store an account's own provider key, sealed with the master key (AES-256-GCM)",
      description: `${adminNote} 400 without a master key (SVC_MASTER_KEY) or for an unconfigured provider.`,
      security: admin,
      requestBody: {
        required: true,
        content: json(
          object({
            account: { type: 'string', description: 'account name or id' },
            provider: { type: 'string', description: 'a configured provider id' },
            key: { type: 'string', description: "the provider's API key" },
          }),
        ),
      },
      responses: {
        '201': { description: 'the stored key, by hint', content: json(ref('ProviderKey')) },
        ...adminPostErrors(400, 404),
      },
    },
    delete: {
      operationId: 'adminRemoveProviderKey',
      tags: ['admin'],
      summary: "Remove an account's own key for a provider; its next request uses the platform's key",
      description: `${adminNote} 404 when the account holds no key for that provider.`,
      security: admin,
      parameters: [
        accountQuery(true),
        { name: 'provider', in: 'query', required: true, description: 'a provider id', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'removed',
          content: json(
            object({
              account: { type: 'string' },
              provider_id: { type: 'string' },
              removed: { type: 'boolean', const: true },
            }),
          ),
        },
        ...adminErrors(400, 404),
      },
    },
  },
}

const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } satisfies Schema } },
})

/** Wrong user codes are limited gateway-wide; while the limit holds, every code waits. */
const wrongCodesLimited = {
  ...html(
    `the form again: more than ${wrongCodeBurst} wrong codes, then more than one every ` +
      `${1 / wrongCodesPerSecond} s, were tried on this gateway (RFC 8628 §5.1); retry-after says when to try again`,
  ),
  headers: { 'Retry-After': headerRef('Retry-After') },
}

const signInPaths: Paths = {
  '/v1/auth/device/code': {
    post: {
      operationId: 'startDeviceSignIn',
      tags: ['sign-in'],
      summary: 'Start a device sign-in (RFC 8628 device authorization request)',
      description:
        'The client shows `user_code`, sends the user to `verification_uri`, and polls /v1/auth/device/token.',
      security: open,
      requestBody: {
        required: false,
        content: json(
          object(
            { device_name: { type: 'string', maxLength: 100, description: 'names the key the sign-in creates' } },
            ['device_name'],
          ),
        ),
      },
      responses: {
        '200': { description: 'the code pair', content: json(ref('DeviceCode')) },
        ...anthropicErrors(400, 413),
        '429': errorResponse(
          'Anthropic',
          429,
          `rate_limit_error: ${maxWaitingDeviceCodes} sign-ins are already waiting for approval (asking needs no ` +
            'credentials, so their number is capped); Retry-After says when the soonest code expires',
          { 'Retry-After': headerRef('Retry-After') },
        ),
      },
    },
  },
  '/v1/auth/device/token': {
    post: {
      operationId: 'pollDeviceSignIn',
      tags: ['sign-in'],
      summary: 'Poll for the API key of an approved sign-in (RFC 8628 device access token request)',
      description:
        'Exactly one poll of an approved code receives a new API key of the approving account; polling faster than ' +
        '`interval` answers `slow_down` and adds 5 s to the interval.',
      security: open,
      requestBody: { required: true, content: json(object({ device_code: { type: 'string', minLength: 1 } })) },
      responses: {
        '200': { description: 'approved: the new API key', content: json(ref('DeviceToken')) },
        '400': {
          description: 'not (yet) approved, in the RFC 8628 shape; a malformed body gets the Anthropic error shape',
          content: json({ oneOf: [ref('DeviceTokenError'), ref('AnthropicError')] }),
        },
        ...anthropicErrors(413),
      },
    },
  },
  '/v1/auth/whoami': {
    get: {
      operationId: 'whoami',
      tags: ['sign-in'],
      summary: 'The calling key, its account and its credit position',
      security: modelKey,
      responses: { '200': { description: 'who the key is', content: json(ref('Whoami')) }, ...anthropicErrors(401) },
    },
  },
  '/v1/auth/logout': {
    post: {
      operationId: 'logout',
      tags: ['sign-in'],
      summary: 'Revoke the calling key',
      security: modelKey,
      responses: {
        '200': {
          description: 'the key is revoked',
          content: json(object({ revoked: { type: 'boolean', const: true }, key_id: { type: 'string' } })),
        },
        ...anthropicErrors(401),
      },
    },
  },
  '/login': {
    get: {
      operationId: 'loginPage',
      tags: ['sign-in'],
      summary: 'The page where a user approves or denies a device code',
      security: open,
      parameters: [
        {
          name: 'code',
          in: 'query',
          required: false,
          description: 'the user code, prefilled (as in `verification_uri_complete`)',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': html('the approval form'),
        '400': html('the form again: the code was already used'),
        '404': html('the form again, saying the code is unknown or expired'),
        '429': wrongCodesLimited,
      },
    },
    post: {
      operationId: 'loginDecide',
      tags: ['sign-in'],
      summary: 'Approve or deny a device code',
      description:
        'Approving needs proof of the account: one of its API keys, or the admin token and an account name. The ' +
        'page sends no script and may not be framed.',
      security: open,
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: object(
              {
                user_code: { type: 'string', description: 'with or without the dash, any case' },
                decision: { type: 'string', enum: ['approve', 'deny'] },
                api_key: { type: 'string' },
                admin_token: { type: 'string' },
                account: { type: 'string', description: 'with admin_token: the account the new key is for' },
              },
              ['decision', 'api_key', 'admin_token', 'account'],
            ),
          },
        },
      },
      responses: {
        '200': html('signed in, or denied'),
        '400': html('the form again: the code was already used or a field is missing'),
        '401': html('the form again: the key or admin token is not valid'),
        '404': html('the form again: the code is unknown or expired, or the account does not exist'),
        ...anthropicErrors(413),
        '429': wrongCodesLimited,
      },
    },
  },
}

const operationsPaths: Paths = {
  '/healthz': {
    get: {
      operationId: 'healthz',
      tags: ['operations'],
      summary: 'Liveness',
      security: open,
      responses: {
        '200': { description: 'alive', content: json(object({ status: { type: 'string', const: 'ok' } })) },
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      tags: ['operations'],
      summary: 'Readiness: the database answers and takes writes, and at least one provider is configured',
      security: open,
      responses: {
        '200': { description: 'ready', content: json(ref('Readiness')) },
        '503': { description: 'not ready', content: json(ref('Readiness')) },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      tags: ['operations'],
      summary: 'Metrics in the Prometheus text exposition format',
      description:
        'Open unless a metrics token is set ([server] metrics_token_env, SVC_METRICS_TOKEN): then that token or the admin token, as a Bearer.',
      security: [{}, { metricsBearer: [] }, { adminBearer: [] }],
      responses: {
        '200': {
          description: 'the metrics',
          content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } },
        },
        ...anthropicErrors(401),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      tags: ['operations'],
      summary: 'This document',
      security: open,
      responses: { '200': { description: 'the OpenAPI 3.1 document', content: json({ type: 'object' }) } },
    },
  },
}

const schemas: Record<string, Schema> = {
  Nanos: {
    type: 'integer',
    format: 'int64',
    description: 'an amount of money in integer USD nanos: 1,000,000,000 is 1 USD',
  },
  RoutingProfile: { type: 'string', enum: profiles, description: 'what a client puts in `model`' },
  RoutingMode: { type: 'string', enum: routingModes, description: 'the routing mode a profile names' },
  AnthropicError: {
    ...object({
      type: { type: 'string', const: 'error' },
      error: object(
        {
          type: {
            type: 'string',
            examples: [
              'invalid_request_error',
              'authentication_error',
              'billing_error',
              'permission_error',
              'not_found_error',
              'request_too_large',
              'rate_limit_error',
              'api_error',
              'timeout_error',
              'overloaded_error',
            ],
          },
          message: { type: 'string' },
        },
        [],
        { additionalProperties: true },
      ),
    }),
    description: "Anthropic's error body: the messages, usage, admin and sign-in routes",
  },
  OpenAIError: {
    ...object({
      error: object({
        message: { type: 'string' },
        type: {
          type: 'string',
          examples: [
            'invalid_request_error',
            'insufficient_quota',
            'rate_limit_error',
            'permission_error',
            'server_error',
          ],
        },
        param: nullable('string', { description: 'the request field at fault, when one is' }),
        code: nullable('string', {
          examples: [
            'invalid_api_key',
            'context_length_exceeded',
            'insufficient_quota',
            'rate_limit_exceeded',
            'server_error',
            'server_overloaded',
            'timeout',
          ],
        }),
      }),
    }),
    description: "OpenAI's error body: the routes under /compat-b and /openai",
  },
  MessagesRequest: {
    ...plain(AnthropicMessagesBody),
    description:
      'An Anthropic Messages request; fields beyond these are passed on (system, tools, thinking, metadata, …). ' +
      '`model` must be a routing profile.',
    examples: [{ model: 'svc-pro', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }] }],
  },
  CountTokensRequest: {
    ...plain(AnthropicCountTokensBody),
    description: 'An Anthropic count_tokens request; `model` must be a routing profile.',
  },
  AnthropicMessage: object(
    {
      id: { type: 'string', pattern: '^msg_', description: '`msg_` and the request id' },
      type: { type: 'string', const: 'message' },
      role: { type: 'string', const: 'assistant' },
      model: { type: 'string', description: 'the concrete upstream model that answered' },
      content: arrayOf(
        { type: 'object', additionalProperties: true },
        'text, thinking, redacted_thinking and tool_use blocks; a web search as server_tool_use and web_search_tool_result',
      ),
      stop_reason: nullable('string', { examples: ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use'] }),
      stop_sequence: nullable('string'),
      usage: object(
        {
          input_tokens: tokens('excludes cache reads and writes'),
          cache_creation_input_tokens: tokens(),
          cache_read_input_tokens: tokens(),
          output_tokens: tokens(),
        },
        ['cache_creation_input_tokens', 'cache_read_input_tokens'],
      ),
    },
    [],
    { additionalProperties: true },
  ),
  ResponsesRequest: {
    ...plain(ResponsesBody),
    // The validator leaves a missing `input` to the decoder, which says why it is refused (a stored
    // prompt or conversation, say): the contract requires it all the same.
    required: ['model', 'input'],
    description:
      'An OpenAI Responses request; other fields are passed on. `model` must be a routing profile; ' +
      '`previous_response_id` is refused (the gateway is stateless).',
    examples: [{ model: 'svc-max', input: 'Hello' }],
  },
  OpenAIResponse: object(
    {
      id: { type: 'string', pattern: '^resp_', description: '`resp_` and the request id' },
      object: { type: 'string', const: 'response' },
      created_at: { type: 'integer', description: 'Unix seconds' },
      status: { type: 'string', enum: ['completed', 'incomplete', 'failed'] },
      model: ref('RoutingProfile', 'the profile the request named'),
      output: arrayOf(
        { type: 'object', additionalProperties: true },
        'message items (`msg_<request id>`), reasoning, function_call and web_search_call items',
      ),
      usage: {
        type: ['object', 'null'],
        properties: {
          input_tokens: tokens('includes cached tokens'),
          input_tokens_details: object({ cached_tokens: tokens() }),
          output_tokens: tokens(),
          output_tokens_details: object({ reasoning_tokens: tokens() }),
          total_tokens: tokens(),
        },
      },
    },
    [],
    { additionalProperties: true },
  ),
  Model: object({
    type: { type: 'string', const: 'model' },
    id: ref('RoutingProfile'),
    display_name: { type: 'string' },
    created_at: dateTime(),
    max_input_tokens: nullable('integer', { description: profileWindow }),
    max_tokens: nullable('integer', { description: profileOutput }),
  }),
  ModelList: object({
    data: arrayOf(ref('Model')),
    has_more: { type: 'boolean' },
    first_id: nullable('string'),
    last_id: nullable('string'),
  }),
  OpenAIModel: object({
    id: ref('RoutingProfile'),
    object: { type: 'string', const: 'model' },
    created: { type: 'integer', description: 'Unix seconds' },
    owned_by: { type: 'string', const: 'svc' },
    context_window: nullable('integer', { description: profileWindow }),
    max_output_tokens: nullable('integer', { description: profileOutput }),
  }),
  OpenAIModelList: object({
    object: { type: 'string', const: 'list' },
    data: arrayOf(ref('OpenAIModel')),
  }),
  Grant: object(
    {
      id: { type: 'string' },
      amount_nanos: nanos('what the grant gave'),
      remaining_nanos: nanos('what is left of it'),
      scope_cost_type: {
        type: 'string',
        enum: [...scopeCostTypes],
        description: 'all pays anything; model_usage model usage on platform keys; byok_fee only the BYOK fee',
      },
      source: { type: 'string' },
      created_at: dateTime(),
      scope_routing_modes: arrayOf(ref('RoutingMode'), 'present only when the grant is scoped'),
      scope_models: arrayOf({ type: 'string' }, 'present only when the grant is scoped'),
      scope_providers: arrayOf({ type: 'string' }, 'present only when the grant is scoped'),
      expires_at: dateTime('present only when the grant expires'),
    },
    ['scope_routing_modes', 'scope_models', 'scope_providers', 'expires_at'],
  ),
  GrantRequest: object(
    {
      account: { type: 'string', description: 'account name or id' },
      usd: {
        oneOf: [
          { type: 'number', exclusiveMinimum: 0 },
          { type: 'string', pattern: '^\\d+(\\.\\d{1,9})?$' },
        ],
        description:
          'the amount in USD; give this or amount_nanos. A string is read to the nano as written; a number of more than 15 significant digits is refused (JSON parsers round it)',
      },
      amount_nanos: nanos('the amount in nanos; give this or usd'),
      scope_cost_type: { type: 'string', enum: [...scopeCostTypes], default: 'all' },
      scope_routing_modes: arrayOf(ref('RoutingMode')),
      scope_models: arrayOf({ type: 'string', minLength: 1 }),
      scope_providers: arrayOf({ type: 'string', minLength: 1 }),
      expires_at: dateTime(),
      source: { type: 'string' },
    },
    [
      'usd',
      'amount_nanos',
      'scope_cost_type',
      'scope_routing_modes',
      'scope_models',
      'scope_providers',
      'expires_at',
      'source',
    ],
  ),
  UsageEvent: {
    ...object({
      id: { type: 'string' },
      request_id: { type: 'string' },
      attempt: { type: 'integer', minimum: 1 },
      model_id: { type: 'string' },
      provider_id: { type: 'string' },
      upstream_model: { type: 'string' },
      committed: {
        type: 'boolean',
        description: 'recorded in the ledger, its charge final; false while its request is still running',
      },
      estimated: { type: 'boolean', description: 'the upstream never reported usage; the gateway estimated it' },
      outcome: { type: 'string', enum: ['ok', 'failed', 'aborted', 'in_progress'] },
      error: nullable('string'),
      input_tokens: tokens('excludes cache reads and cache writes'),
      cached_input_tokens: tokens('cache reads'),
      cache_creation_input_tokens: tokens('cache writes'),
      cache_creation_1h_input_tokens: tokens(
        "the part of cache_creation_input_tokens written for an hour (Anthropic's ttl 1h), priced at the model's 1-hour cache-write price",
      ),
      output_tokens: tokens(),
      web_search_requests: {
        type: 'integer',
        minimum: 0,
        description: "searches the upstream's own web search tool ran, each priced per search (in cost_nanos)",
      },
      cost_nanos: nanos('the full cost of the leg at list price'),
      charged_nanos: nanos('what was taken from credit grants'),
      byok: { type: 'boolean' },
      created_at: dateTime(),
      ended_at: nullable('string', { format: 'date-time' }),
    }),
    description: 'one upstream leg of a request',
  },
  UsageSummary: object({
    limit_nanos: nanos('sum of the unexpired grants'),
    used_nanos: nanos('what was charged to them'),
    remaining_nanos: nanos('limit_nanos − used_nanos'),
    grants: arrayOf(ref('Grant'), 'unexpired grants'),
    recent_events: arrayOf(ref('UsageEvent'), 'newest first, at most `limit`'),
  }),
  RequestSummary: object(
    {
      request_id: { type: 'string', description: 'the X-Request-Id of the model response (a ULID)' },
      status: {
        type: 'string',
        enum: ['completed', 'failed', 'aborted', 'in_progress'],
        description: 'in_progress only when looked up by id while the request runs',
      },
      http_status: nullable('integer'),
      surface: { type: 'string', enum: ['messages', 'responses'] },
      routing_mode: ref('RoutingMode'),
      stream: { type: 'boolean' },
      selected_model_id: nullable('string', { description: 'the model that answered' }),
      selected_provider_id: nullable('string'),
      attempts: {
        type: 'integer',
        minimum: 0,
        description:
          'upstream calls made (its legs): one per candidate tried, and one per message of a paused turn svc sent back',
      },
      total_cost_nanos: nanos('full cost of all legs'),
      charged_nanos: nanos('what was taken from credit; total_cost_nanos − charged_nanos went unpaid or was BYOK'),
      total_input_tokens: tokens(),
      total_cached_input_tokens: tokens(),
      total_cache_creation_input_tokens: tokens(),
      total_output_tokens: tokens(),
      byok: { type: 'boolean', description: "served with the account's own provider key" },
      session_id: { type: 'string' },
      agent_id: { type: 'string' },
      session_source: { type: 'string', examples: ['claude-code', 'codex'] },
      error: {
        oneOf: [object({ type: { type: 'string' }, message: nullable('string') }), { type: 'null' }],
      },
      created_at: dateTime(),
      first_byte_at: nullable('string', { format: 'date-time' }),
      ended_at: nullable('string', { format: 'date-time' }),
      time_to_first_byte_ms: nullable('integer'),
      duration_ms: nullable('integer'),
    },
    ['session_id', 'agent_id', 'session_source'],
  ),
  RequestPage: object({
    items: arrayOf(ref('RequestSummary'), 'newest first'),
    has_more: { type: 'boolean' },
  }),
  ProviderRank: {
    ...object(
      {
        model_id: { type: 'string' },
        provider_id: { type: 'string' },
        upstream_model: { type: 'string' },
        score: nullable('number'),
        estimated_cost_nanos: { ...nullable('integer'), description: 'USD nanos, estimated before dispatch' },
        byok: { type: 'boolean' },
        quality: { type: 'number' },
        nudge: { type: 'number', description: "points this account's feedback added to or took from the score" },
        health: object(
          {
            state: { type: 'string', enum: ['closed', 'open', 'half_open', 'cooling'] },
            ttfb_ms: nullable('number'),
            error_rate: { type: 'number' },
            until: dateTime('when the candidate may be tried normally again'),
          },
          ['until'],
        ),
        status: { type: 'string', enum: ['candidate', 'chosen', 'failed', 'aborted', 'not_tried', 'skipped'] },
        reason: { type: 'string' },
      },
      [],
      { additionalProperties: true },
    ),
    description: 'one candidate model as ranked, and what became of it',
  },
  RequestDetail: {
    allOf: [
      ref('RequestSummary'),
      object({
        provider_ranks: arrayOf(ref('ProviderRank'), 'every candidate considered, best first'),
        usage_events: arrayOf(ref('UsageEvent')),
        grant_charges: arrayOf(
          object({
            grant_id: { type: 'string' },
            usage_event_id: { type: 'string' },
            cost_type: { type: 'string', enum: ['model_usage', 'byok_fee'] },
            amount_nanos: nanos('taken from this grant'),
          }),
        ),
        feedback: arrayOf(ref('Feedback')),
      }),
    ],
  },
  FeedbackReason: { type: 'string', enum: [...feedbackReasons] },
  FeedbackRequest: {
    ...object(
      {
        rating: { type: 'string', enum: ['up', 'down'] },
        reason: ref('FeedbackReason'),
        comment: {
          type: 'string',
          description:
            `at most ${usageLimits.feedbackComment.toLocaleString('en')} characters as a reader counts them ` +
            '(grapheme clusters: an emoji is one, whatever its code points), which maxLength, counting code points, cannot ' +
            'say: a longer one is a 400. A blank comment (whitespace only) counts as none: it is not stored, and ' +
            'alone it is a 400',
        },
      },
      ['rating', 'reason', 'comment'],
      { additionalProperties: false },
    ),
    description: 'at least one of rating, reason and a comment that is not blank',
    anyOf: [
      { required: ['rating'] },
      { required: ['reason'] },
      { required: ['comment'], properties: { comment: { pattern: '\\S' } } },
    ],
  },
  Feedback: object({
    id: { type: 'string' },
    request_id: { type: 'string' },
    rating: { type: ['string', 'null'], enum: ['up', 'down', null] },
    reason: { type: ['string', 'null'], enum: [...feedbackReasons, null] },
    comment: nullable('string'),
    created_at: dateTime(),
  }),
  Session: object({
    session_id: { type: 'string' },
    session_source: {
      type: 'string',
      description: 'as the client named it, else claude-code or codex when svc recognises the agent, else api',
      examples: ['claude-code', 'codex', 'api'],
    },
    agent_id: nullable('string'),
    request_count: { type: 'integer', minimum: 0 },
    total_cost_nanos: nanos('full cost of the requests in the session'),
    first_at: dateTime(),
    latest_at: dateTime(),
  }),
  Account: object({ id: { type: 'string' }, name: { type: 'string' }, created_at: dateTime() }),
  ApiKey: object({
    id: { type: 'string' },
    account_id: { type: 'string' },
    name: { type: 'string' },
    prefix: { type: 'string', description: 'the first characters of the key, to recognise it' },
    created_at: dateTime(),
    revoked_at: nullable('string', { format: 'date-time' }),
  }),
  CreatedApiKey: {
    allOf: [ref('ApiKey'), object({ key: { type: 'string', description: 'the key itself, shown this once' } })],
  },
  ProviderKey: object(
    {
      id: { type: 'string' },
      account_id: { type: 'string' },
      provider_id: { type: 'string' },
      hint: { type: 'string', description: 'an ellipsis and the last characters of the key' },
      created_at: dateTime(),
      opens: {
        type: 'boolean',
        description:
          "in a list: whether this gateway's master key opens it (one that does not serves no one); not in the " +
          'answer to storing a key, which the master key has just sealed',
      },
    },
    ['opens'],
  ),
  DeviceCode: object({
    device_code: { type: 'string', description: 'secret; the client polls with it' },
    user_code: { type: 'string', pattern: '^[A-Z]{4}-[A-Z]{4}$', description: 'what the user checks and types' },
    verification_uri: { type: 'string', format: 'uri', description: 'the /login page' },
    verification_uri_complete: { type: 'string', format: 'uri', description: '/login with the code filled in' },
    expires_in: { type: 'integer', description: 'seconds', examples: [deviceCodeLifetimeSeconds] },
    interval: { type: 'integer', description: 'seconds to wait between polls' },
  }),
  DeviceToken: object({
    access_token: { type: 'string', description: 'a new API key of the approving account' },
    token_type: { type: 'string', const: 'bearer' },
    key_id: { type: 'string' },
    account: object({ id: { type: 'string' }, name: { type: 'string' } }),
  }),
  DeviceTokenError: object({
    error: {
      type: 'string',
      enum: ['authorization_pending', 'slow_down', 'expired_token', 'access_denied', 'invalid_grant'],
      description: 'RFC 8628 §3.5',
    },
    error_description: { type: 'string' },
  }),
  Whoami: object({
    account: object({ id: { type: 'string' }, name: { type: 'string' } }),
    key: object({ id: { type: 'string' }, name: { type: 'string' }, prefix: { type: 'string' } }),
    credit: object({
      limit_nanos: nanos('sum of the unexpired grants'),
      used_nanos: nanos('what was charged to them'),
      remaining_nanos: nanos('limit_nanos − used_nanos'),
      scoped: arrayOf(
        ref('Grant'),
        'the unexpired grants with credit left that pay only some requests (a cost type, routing modes, models or providers)',
      ),
    }),
  }),
  Readiness: object({
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    database: { type: 'boolean' },
    recording: {
      type: 'boolean',
      description: 'false while the database refuses writes (a full disk): model requests are answered 503',
    },
    providers: arrayOf({ type: 'string' }, 'configured provider ids'),
  }),
}

const header = (name: string, description: string): Parameter => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string' },
})

// Spend over time (src/http/spend.ts) and the dashboard's static files (src/http/dashboard.ts).
const spendTotals = object({
  cost_nanos: nanos('what the legs cost'),
  requests: tokens('distinct requests with a leg here'),
  input_tokens: tokens('uncached input'),
  cached_input_tokens: tokens('input read from the prompt cache'),
  cache_creation_input_tokens: tokens('input written to the prompt cache'),
  output_tokens: tokens(),
  web_search_requests: tokens("searches the upstreams' own web search tools ran (their cost is in cost_nanos)"),
})
const spendQuery = (name: string, description: string, schema: Schema): Parameter => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
})
const dashboardPaths: Paths = {
  '/v1/usage/spend': {
    get: {
      operationId: 'getSpend',
      tags: ['usage'],
      summary: 'Spend and tokens per hour or day, by model, provider or routing mode',
      description:
        'Summed by the database over legs created in [since, until). Buckets are UTC hours or days; only buckets ' +
        `with legs are listed. At most ${spendLimits.hour.maxLabel} of hours and ${spendLimits.day.maxLabel} of ` +
        'days: a wider window is a 400 naming the bound. Cache savings are priced at the current catalog prices.',
      security: bearerKey,
      parameters: [
        spendQuery('bucket', 'bucket width', { type: 'string', enum: spendBuckets, default: 'day' }),
        spendQuery('group_by', 'one series per', { type: 'string', enum: [...spendGroups], default: 'model' }),
        spendQuery('since', 'RFC 3339; default until minus 7 days (day buckets) or 24 hours (hour buckets)', {
          type: 'string',
          format: 'date-time',
        }),
        spendQuery('until', 'RFC 3339, exclusive; default the end of the current bucket', {
          type: 'string',
          format: 'date-time',
        }),
      ],
      responses: {
        '200': {
          description: 'series of bucketed points, totals and cache savings',
          content: json(
            object({
              bucket: { type: 'string', enum: spendBuckets },
              group_by: { type: 'string', enum: [...spendGroups] },
              since: dateTime(),
              until: dateTime(),
              series: arrayOf(
                object({
                  key: { type: 'string', description: 'the model, provider or routing mode' },
                  points: arrayOf({ allOf: [object({ t: dateTime('bucket start') }), spendTotals] }),
                }),
                'biggest cost first',
              ),
              totals: spendTotals,
              cache_savings_nanos: nanos('cache reads × (input price − cache-read price), at current prices'),
              cache_write_premium_nanos: nanos('cache writes × (cache-write price − input price), at current prices'),
              cache_unpriced_tokens: tokens('cache tokens of models the catalog no longer prices, left out'),
            }),
          ),
        },
        ...anthropicErrors(400, 401),
      },
    },
  },
  '/dashboard': {
    get: {
      operationId: 'dashboard',
      tags: ['operations'],
      summary: 'The dashboard page (also at /dashboard/); signs in with an API key held in sessionStorage',
      security: open,
      responses: { '200': html('the page'), '304': { description: 'unchanged (If-None-Match)' } },
    },
  },
  '/dashboard/{file}': {
    get: {
      operationId: 'dashboardFile',
      tags: ['operations'],
      summary: "The dashboard's scripts, stylesheet and uPlot, embedded in the binary",
      security: open,
      parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'the file',
          content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
        },
        '304': { description: 'unchanged (If-None-Match)' },
        ...anthropicErrors(404),
      },
    },
  },
}

export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'svc routing gateway',
    version: interfaceVersion,
    summary: 'An LLM routing gateway: Anthropic Messages and OpenAI Responses in, routed behind profiles',
    description:
      'Clients name a routing profile (`svc-pro`, `svc-max`, `svc-ultra-saver`) instead of a model. Every answer ' +
      'to a routed model request, an error too, carries `X-Request-Id`; the usage routes look it up. All money is integer USD nanos ' +
      '(1,000,000,000 nanos = 1 USD). Token fields follow Anthropic: `input_tokens` excludes cache reads and writes.',
  },
  servers: [{ url: 'http://127.0.0.1:8080', description: 'svc serve with its defaults' }],
  tags: [
    { name: 'messages', description: 'Anthropic Messages shape, at /compat-a and /anthropic' },
    { name: 'responses', description: 'OpenAI Responses shape, at /compat-b and /openai' },
    { name: 'usage', description: 'credit, request history, sessions, feedback; never behind the quota gate' },
    { name: 'admin', description: "the CLI's administration verbs over HTTP" },
    { name: 'sign-in', description: 'device sign-in for command-line clients (RFC 8628)' },
    { name: 'operations', description: 'health, metrics and this document' },
  ],
  paths: {
    ...messagesPaths('/compat-a', false),
    ...messagesPaths('/anthropic', true),
    ...responsesPaths('/compat-b', false),
    ...responsesPaths('/openai', true),
    ...usagePaths,
    ...adminPaths,
    ...signInPaths,
    ...operationsPaths,
    ...dashboardPaths,
  },
  components: {
    schemas,
    securitySchemes: {
      apiKeyBearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'a svc API key: `Authorization: Bearer svc-…`',
      },
      apiKeyHeader: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description:
          "a svc API key in `x-api-key`, as Anthropic's SDK sends it; on the messages routes (and whoami/logout). " +
          'When both are sent, Authorization wins.',
      },
      adminBearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'the admin token, from the variable [server] admin_token_env names (SVC_ADMIN_TOKEN)',
      },
      metricsBearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'the metrics token, from the variable [server] metrics_token_env names (SVC_METRICS_TOKEN)',
      },
    },
    parameters: {
      AnthropicVersion: header(
        'anthropic-version',
        'the Messages API version, a YYYY-MM-DD date such as 2023-06-01; this or x-compat-version is required',
      ),
      CompatVersion: header(
        'x-compat-version',
        'a date-format version string (YYYY-MM-DD, e.g. 2023-06-01); this or anthropic-version is required',
      ),
      AnthropicBeta: header('anthropic-beta', 'passed on to Anthropic upstreams'),
      SessionId: header(
        'x-session-id',
        "groups requests into a session; failing it, Claude Code's and Codex's own session headers or metadata.session_id",
      ),
      AgentId: header('x-agent-id', 'the agent within the session; failing it, metadata.agent_id'),
      SessionSource: header(
        'x-session-source',
        'what started the session, e.g. claude-code or codex; failing it, metadata.session_source, else inferred',
      ),
    },
    headers: {
      'X-Request-Id': {
        description:
          'the routed request (a ULID): look it up at /v1/usage/requests/{id}. Every answer of a messages or ' +
          'responses request that was routed carries it, an error too; a refusal before routing (a body not of ' +
          "the route's shape, a model that names no profile, svc's database refusing writes) carries none, nor do " +
          "the other routes' errors, but for a 500 from a fault in the gateway, which carries the id its log line names",
        schema: { type: 'string' },
      },
      'request-id': {
        description:
          "the same id, on the messages routes' answers that carry X-Request-Id (the Anthropic SDK reads this one)",
        schema: { type: 'string' },
      },
      'x-should-retry': {
        description:
          'sent, as `false`, on an error the same request sent again cannot fix (the Anthropic and OpenAI SDKs ' +
          'obey it over their status rule); never sent as `true`',
        schema: { type: 'string', const: 'false' },
      },
      'Retry-After': {
        description:
          "seconds to wait before trying again: an upstream's own (one over 60 s is not passed on), 1 while the " +
          "account's credit is held by its requests in flight, 1 while the requests in flight fill svc's memory " +
          "budget, 5 while svc's database refuses writes; on the sign-in routes, until a limit lifts",
        schema: { type: 'integer', minimum: 0 },
      },
      Allow: { description: 'the method this path takes', schema: { type: 'string' } },
    },
    responses: {
      ...Object.fromEntries(
        Object.entries(anthropicStatuses).map(([status, d]) => [
          `Anthropic${status}`,
          errorResponse('Anthropic', Number(status), d),
        ]),
      ),
      ...Object.fromEntries(
        Object.entries(openAIStatuses).map(([status, d]) => [
          `OpenAI${status}`,
          errorResponse('OpenAI', Number(status), d),
        ]),
      ),
    },
  },
}

export const openApiRoutes = () => new Elysia({ name: 'http.openapi' }).get('/openapi.json', () => openApiDocument)
