// Gemini's thought signatures, carried from one turn to the next inside the tool call's id.
//
// Gemini 3 refuses a tool-call turn sent back without the opaque signature its answer put on the
// call (400 "Function call is missing a thought_signature"). Through Google's OpenAI-compatible
// endpoint the signature rides on the tool call as `extra_content.google.thought_signature`;
// through OpenRouter, in the message's `reasoning_details` as a `reasoning.encrypted` entry whose
// `id` is the call's. Anthropic and Responses clients have no field that would bring it back, but
// they do bring back every call's id, in the call and in its result: so the Chat decoders write the
// signature into the id (`<id>__svcts_<base64url>`, only the characters Anthropic allows in ids),
// and the Chat encoder takes it out again for a provider that reads signatures, in that provider's
// form. Every other upstream gets the id as the provider first gave it: the suffix can be
// kilobytes, and OpenAI refuses ids over 40 characters. Stateless: the conversation carries its
// signatures, across restarts and replicas alike.

/** How a Chat provider takes signatures back (config: thought_signatures). */
export type ThoughtSignatureForm = 'extra_content' | 'reasoning_details' | 'off'

const marker = '__svcts_'

/** The id a client sees for a call that came with this signature. */
export const withThoughtSignature = (id: string, signature: string): string =>
  `${id}${marker}${Buffer.from(signature, 'utf8').toString('base64url')}`

/** Where an id's provider-given part ends: its length when it carries no signature. */
const bareEnd = (id: string): number => {
  const at = id.indexOf(marker)
  return at < 0 ? id.length : at
}

/** A call id as the provider gave it, and the signature carried in it, if any. */
export function splitThoughtSignature(id: string): { id: string; signature?: string } {
  const end = bareEnd(id)
  if (end === id.length) return { id }
  return { id: id.slice(0, end), signature: Buffer.from(id.slice(end + marker.length), 'base64url').toString('utf8') }
}

/** The id as the provider gave it: what every upstream but a signature reader gets. */
export const withoutThoughtSignature = (id: string): string => id.slice(0, bareEnd(id))

/** The id with its provider-given part rewritten, a signature it carries kept as it is. */
export function withBareIdRewritten(id: string, rewrite: (bare: string) => string): string {
  const end = bareEnd(id)
  return rewrite(id.slice(0, end)) + id.slice(end)
}

/** The signature Google's compatible endpoint put on a tool call (or a fragment of one), if any. */
export function thoughtSignatureOf(call: Record<string, unknown>): string | undefined {
  const extra = call.extra_content
  if (typeof extra !== 'object' || extra === null) return undefined
  const google = (extra as Record<string, unknown>).google
  if (typeof google !== 'object' || google === null) return undefined
  const signature = (google as Record<string, unknown>).thought_signature
  return typeof signature === 'string' && signature !== '' ? signature : undefined
}

/**
 * The signatures OpenRouter put in a message's (or a stream chunk's) `reasoning_details`, by the id
 * of the call each belongs to, added to `found` (a stream's, so far). Only Gemini's: other models'
 * details carry reasoning, not calls.
 */
export function openRouterCallSignatures(
  details: unknown,
  found?: Map<string, string>,
): Map<string, string> | undefined {
  if (!Array.isArray(details)) return found
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue
    const { type, data, id, format } = detail as Record<string, unknown>
    if (type !== 'reasoning.encrypted' || typeof data !== 'string' || data === '' || typeof id !== 'string') continue
    if (typeof format === 'string' && !format.startsWith('google-gemini')) continue
    found ??= new Map()
    found.set(id, data)
  }
  return found
}

/**
 * What Google documents for a call its model did not make (history another model wrote, or a client
 * that lost the id): Gemini then skips the check instead of refusing the turn. OpenRouter takes the
 * same value in a `reasoning.encrypted` entry.
 */
export const unsignedCallSignature = 'skip_thought_signature_validator'

/** Only Gemini checks signatures; another model given the skip value would read it as history. */
export const checksThoughtSignatures = (upstreamModel: string): boolean => /gemini/i.test(upstreamModel)

/** A tool call's `extra_content` carrying a signature, as Google's compatible endpoint reads it. */
export const extraContentWith = (signature: string) => ({ google: { thought_signature: signature } })

/** A message's `reasoning_details` carrying its calls' signatures, as OpenRouter reads them. */
export const reasoningDetailsWith = (signed: readonly { id: string; signature: string }[]) =>
  signed.map(({ id, signature }, index) => ({
    type: 'reasoning.encrypted',
    data: signature,
    id,
    format: 'google-gemini-v1',
    index,
  }))
