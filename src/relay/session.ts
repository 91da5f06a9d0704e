// Session attributes for coding-agent workloads, from explicit headers first, then from what
// Claude Code and Codex send on their own, then from the body's metadata.
import { isObject } from '../protocols/wire-values'

export interface SessionAttributes {
  sessionId: string | null
  agentId: string | null
  sessionSource: string | null
}

/** Body metadata keys that carry session attributes: svc's own, not the upstream's. */
export const sessionMetadataKeys = ['session_id', 'agent_id', 'session_source'] as const

const isSessionMetadataKey = (key: string) => (sessionMetadataKeys as readonly string[]).includes(key)

/**
 * An Anthropic body without svc's metadata keys (README, Sessions): Anthropic's metadata takes only
 * `user_id`, and refuses a request with any other key. Whatever else the client put there goes on.
 */
export function withoutSessionMetadata(body: Record<string, unknown>): Record<string, unknown> {
  const metadata = body.metadata
  if (!isObject(metadata) || !Object.keys(metadata).some(isSessionMetadataKey)) return body
  const rest = Object.fromEntries(Object.entries(metadata).filter(([key]) => !isSessionMetadataKey(key)))
  const { metadata: _metadata, ...out } = body
  return Object.keys(rest).length === 0 ? out : { ...out, metadata: rest }
}

/** Session attributes are kept to this many characters (code points: an emoji is one). */
const longestSessionValue = 200

/**
 * A session attribute as svc records it: trimmed, at most 200 characters, cut between characters
 * (a cut through an emoji's surrogate pair recorded a character no client sent), none if empty.
 * The usage routes look ids up by the same rule, so the id a client sent finds its session.
 */
export function asRecorded(value: string | null | undefined): string | null {
  const trimmed = value?.trim()
  if (!trimmed) return null
  // Counted in UTF-16 units first: the usual id is far shorter, and nothing is allocated for it.
  return trimmed.length <= longestSessionValue ? trimmed : Array.from(trimmed).slice(0, longestSessionValue).join('')
}
const clip = asRecorded

/** A session attribute from body metadata, held to the same rule as its header (a string, clipped). */
function fromMetadata(
  metadata: Record<string, unknown> | undefined,
  key: (typeof sessionMetadataKeys)[number],
): string | null {
  const value = metadata?.[key]
  return typeof value === 'string' ? clip(value) : null
}

/**
 * Claude Code's metadata.user_id: a JSON string such as {"device_id":…,"session_id":…} from 2.1.78,
 * before it `user_<hash>_account_<uuid>_session_<uuid>` (the header came only with 2.1.86).
 */
const sessionSuffix = /_session_([\w-]+)$/

function claudeCodeSessionFromUserId(userId: unknown): string | null {
  if (typeof userId !== 'string') return null
  if (!userId.startsWith('{')) return sessionSuffix.exec(userId)?.[1] ?? null
  try {
    const parsed = JSON.parse(userId) as { session_id?: unknown }
    return typeof parsed.session_id === 'string' ? parsed.session_id : null
  } catch {
    return null
  }
}

/**
 * Which agent sent a session that names no source: Claude Code's user agent is `claude-cli/<version>`,
 * Codex's `codex_cli_rs/<version>` or `codex_exec/<version>` (seen on the wire). Anything else is
 * `api`: a session summary always says where it came from (the API spec gives its source as a string).
 */
function agentOfUserAgent(headers: Headers): string {
  const userAgent = headers.get('user-agent') ?? ''
  if (userAgent.startsWith('claude-cli/')) return 'claude-code'
  if (userAgent.startsWith('codex_')) return 'codex'
  return 'api'
}

export function readSessionAttributes(
  headers: Headers,
  metadata: Record<string, unknown> | undefined,
): SessionAttributes {
  const claudeCodeSession =
    clip(headers.get('x-claude-code-session-id')) ?? clip(claudeCodeSessionFromUserId(metadata?.user_id))
  // Codex sends its conversation id as `session-id` (0.169 sends `session-id` and `thread-id` with
  // hyphens, seen on the wire), `session_id` in earlier builds and `conversation_id` in older ones.
  const codexSession =
    clip(headers.get('session-id')) ?? clip(headers.get('session_id')) ?? clip(headers.get('conversation_id'))
  const sessionId =
    clip(headers.get('x-session-id')) ?? claudeCodeSession ?? codexSession ?? fromMetadata(metadata, 'session_id')
  // For each attribute its header wins over the body's metadata (session_id puts Claude Code's and
  // Codex's own ids between the two), and a source the client names wins over the one svc infers.
  const namedSource = clip(headers.get('x-session-source')) ?? fromMetadata(metadata, 'session_source')
  const inferredSource = () => (claudeCodeSession ? 'claude-code' : codexSession ? 'codex' : agentOfUserAgent(headers))
  const agentId = clip(headers.get('x-agent-id')) ?? fromMetadata(metadata, 'agent_id')
  const subagent = subagentOf(headers)
  return {
    sessionId,
    // A subagent's requests under the agent that started it, `<agent>/<subagent>` (the source where
    // no agent is named): the launchers name the agent (`claude-code@host`), which every request of
    // the session carried alike.
    agentId: subagent ? underAgent(agentId ?? namedSource ?? inferredSource(), subagent) : agentId,
    sessionSource: namedSource ?? (sessionId ? inferredSource() : null),
  }
}

/** `<agent>/<subagent>` within the attributes' length, the agent's part cut to make room. */
function underAgent(agent: string, subagent: string): string {
  const room = longestSessionValue - 1 - Array.from(subagent).length
  return room > 0 ? `${Array.from(agent).slice(0, room).join('')}/${subagent}` : subagent
}

/**
 * The subagent a request comes from, as the agents mark it (seen on the wire): Claude Code's Task
 * tool sends `x-claude-code-agent-id`; Codex's spawned agents send `x-openai-subagent` with their
 * own `thread-id`.
 */
function subagentOf(headers: Headers): string | null {
  const claudeCode = clip(headers.get('x-claude-code-agent-id'))
  if (claudeCode) return claudeCode
  return headers.has('x-openai-subagent') ? clip(headers.get('thread-id')) : null
}

/**
 * A session's key for an upstream's prompt cache: OpenAI routes requests that share one to the
 * same cache, where svc's many sessions under one platform key would otherwise crowd a prompt
 * prefix they all share (an agent's system prompt and tools) onto one machine and overflow it.
 * Hashed with the account so that no session id, the client's own, leaves svc.
 */
export const promptCacheKeyOf = (accountId: string, sessionId: string): string =>
  `svc-${Bun.hash(`${accountId}\0${sessionId}`).toString(36)}`
