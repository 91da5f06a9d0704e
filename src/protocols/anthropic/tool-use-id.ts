// Anthropic accepts tool_use ids matching ^[a-zA-Z0-9_-]+$ only; other providers' ids
// (`functions.read:0`, Gemini `…__thought__…`) are rewritten the same way every time, so a
// tool_use and the tool_result that answers it still match after the rewrite.
import { withBareIdRewritten, withoutThoughtSignature } from '../thought-signature'

const valid = /^[a-zA-Z0-9_-]+$/
const invalidChars = /[^a-zA-Z0-9_-]/g

/** An id an Anthropic client can send back; a Gemini signature it carries stays readable. */
export const sanitizeToolUseId = (id: string): string => (valid.test(id) ? id : withBareIdRewritten(id, sanitized))

/** The id for Anthropic's API: the provider's own, without the signature only Gemini reads (thought-signature.ts). */
export const anthropicUpstreamToolId = (id: string): string => sanitized(withoutThoughtSignature(id))

function sanitized(id: string): string {
  if (valid.test(id)) return id
  // The hash keeps ids that differ only in replaced characters (`a.b` vs `a:b`) apart.
  return `${id.replace(invalidChars, '_')}_${hashId(id)}`
}

// FNV-1a, 32 bits: deterministic and short; not a security boundary.
function hashId(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(36)
}
