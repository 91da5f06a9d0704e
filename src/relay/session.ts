// Session attributes for coding-agent workloads, from explicit headers first, then from what
// Claude Code and Codex send on their own.
export interface SessionAttributes {
  sessionId: string | null
  agentId: string | null
  sessionSource: string | null
}

const clip = (value: string | null | undefined) => (value ? value.trim().slice(0, 200) || null : null)

/** Claude Code's metadata.user_id is a JSON string such as {"device_id":…,"session_id":…}. */
function claudeCodeSessionFromUserId(userId: unknown): string | null {
  if (typeof userId !== 'string' || !userId.startsWith('{')) return null
  try {
    const parsed = JSON.parse(userId) as { session_id?: unknown }
    return typeof parsed.session_id === 'string' ? parsed.session_id : null
  } catch {
    return null
  }
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
  const metadataSession = typeof metadata?.session_id === 'string' ? clip(metadata.session_id) : null
  const sessionId = clip(headers.get('x-session-id')) ?? claudeCodeSession ?? codexSession ?? metadataSession
  const inferredSource = claudeCodeSession ? 'claude-code' : codexSession ? 'codex' : null
  return {
    sessionId,
    agentId: clip(headers.get('x-agent-id')),
    sessionSource: clip(headers.get('x-session-source')) ?? (sessionId ? inferredSource : null),
  }
}
