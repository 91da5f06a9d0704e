// Reasoning replay across dialects, through a Responses reasoning item's opaque `encrypted_content`.
//
// OpenAI → neutral: OpenAI's `encrypted_content` only OpenAI can read back. The neutral ThinkingBlock
// has one `signature` slot, which Anthropic fills with its own opaque value, so an OpenAI blob travels
// there as a gateway-made signature, base64('gw1:openai-responses:<blob>') (§4.8): the Anthropic codec
// already strips every base64('gw1:…') signature before Anthropic sees it, and the Responses encoders
// replay only these as `encrypted_content`.
//
// Anthropic → Responses client: a signed thinking block (or a redacted_thinking block) goes out as a
// reasoning item whose `encrypted_content` is base64url(JSON {v:1, provider:'anthropic', type, …}),
// so a stateless client (Codex: `store:false`, `include:["reasoning.encrypted_content"]`) replays it
// and the next turn rebuilds the block Anthropic requires at the head of a tool loop. The thinking
// text itself comes back in the item's summary; the blob carries only what the summary cannot.
import type { RedactedThinkingBlock, ThinkingBlock } from '../../exchange/types'
import { isForeignSignature } from '../anthropic/thinking-signature'
import { isObject } from '../wire-values'

const marker = 'gw1:openai-responses:'

/**
 * `maker`: for a Responses-compatible server's blob (OpenRouter's and xAI's carry a model's
 * encrypted reasoning, Ollama's its thinking as plain text), the provider that made it, which alone
 * gets it back: base64('gw1:openai-responses@<maker>:<blob>'). Unset for OpenAI's own.
 */
export const tagResponsesSignature = (encryptedContent: string, maker?: string): string =>
  Buffer.from(`${maker === undefined ? marker : `gw1:openai-responses@${maker}:`}${encryptedContent}`, 'utf8').toString(
    'base64',
  )

/** A signature this module made, decoded: the blob, and the server that made it if not OpenAI. */
const readTagged = (signature: string | undefined): { blob: string; maker?: string } | undefined => {
  // base64('gw1:') always begins 'Z3cxO'; skip decoding Anthropic's own (long) signatures.
  if (!signature?.startsWith('Z3cxO')) return undefined
  const text = Buffer.from(signature, 'base64').toString('utf8')
  if (text.startsWith(marker)) return { blob: text.slice(marker.length) }
  const made = /^gw1:openai-responses@([^:]+):/.exec(text)
  return made ? { blob: text.slice(made[0].length), maker: made[1]! } : undefined
}

/** OpenAI's `encrypted_content` inside a signature this module made, or undefined for any other signature. */
export const readResponsesSignature = (signature: string | undefined): string | undefined => {
  const tagged = readTagged(signature)
  return tagged && tagged.maker === undefined ? tagged.blob : undefined
}

/** The blob `provider` (a compatible server) made, inside a signature this module made; else undefined. */
export const readServerSignature = (signature: string | undefined, provider: string): string | undefined => {
  const tagged = readTagged(signature)
  return tagged?.maker === provider ? tagged.blob : undefined
}

/** What an Anthropic reasoning blob carries: the thinking block's signature, or a redacted block's data. */
export type AnthropicReasoning = { type: 'thinking'; signature: string } | { type: 'redacted_thinking'; data: string }

// The JSON always opens with these 30 bytes (key order is ours), so every blob opens with their
// 40 base64url characters: anything else (OpenAI's Fernet-like tokens, garbage) is rejected unread.
const blobHead = '{"v":1,"provider":"anthropic",'
const blobPrefix = Buffer.from(blobHead, 'utf8').toString('base64url')

export const encodeAnthropicReasoning = (reasoning: AnthropicReasoning): string =>
  Buffer.from(
    JSON.stringify(
      reasoning.type === 'thinking'
        ? { v: 1, provider: 'anthropic', type: 'thinking', signature: reasoning.signature }
        : { v: 1, provider: 'anthropic', type: 'redacted_thinking', data: reasoning.data },
    ),
    'utf8',
  ).toString('base64url')

// A compatible server's blob, for a Responses client to keep and send back: which server made it
// travels with it (OpenAI could not read it, nor another server), as Anthropic's do above.
const serverBlobHead = '{"v":1,"provider":"server",'
const serverBlobPrefix = Buffer.from(serverBlobHead, 'utf8').toString('base64url')

const providerId = /^[a-z0-9][a-z0-9_-]*$/

const encodeServerReasoning = (maker: string, blob: string): string =>
  Buffer.from(JSON.stringify({ v: 1, provider: 'server', maker, blob }), 'utf8').toString('base64url')

/** The signature a client's server blob stands for (tagResponsesSignature), or undefined for any other value. */
export const readServerReasoning = (encryptedContent: string): string | undefined => {
  if (!encryptedContent.startsWith(serverBlobPrefix)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(encryptedContent, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!isObject(parsed) || parsed['v'] !== 1 || parsed['provider'] !== 'server') return undefined
  const { maker, blob } = parsed
  // A provider id, as config ids are: a forged one with a ':' would otherwise split the tag.
  return typeof maker === 'string' && providerId.test(maker) && typeof blob === 'string' && blob !== ''
    ? tagResponsesSignature(blob, maker)
    : undefined
}

/** An id svc gave a reasoning item it made (encode-responses-response.ts): `rs_<ULID>_<index>`. */
const svcReasoningItemId = /^rs_[0-9A-HJKMNP-TV-Z]{26}_\d+$/

/**
 * A client's input items without the reasoning items OpenAI cannot read back (the same array when
 * there are none), for an OpenAI-Responses upstream; a conversation other providers served in
 * part (a fallback, a session that moved) has them:
 * - those carrying one of our Anthropic or compatible-server blobs: refused (400);
 * - those with no blob at all, which OpenAI would look up by id and not find (404 "Item with id
 *   'rs_…' not found"): where the request is not stored, or the id is one svc made for reasoning
 *   another provider did (a Chat model's, shown to the client as a summary).
 */
export function withoutUnreadableReasoning(items: unknown[], stored: boolean): unknown[] {
  const unreadable = (item: unknown) => {
    if (!isObject(item) || item.type !== 'reasoning') return false
    const blob = item.encrypted_content
    if (typeof blob === 'string' && blob !== '') return blob.startsWith(blobPrefix) || blob.startsWith(serverBlobPrefix)
    return !stored || (typeof item.id === 'string' && svcReasoningItemId.test(item.id))
  }
  return items.some(unreadable) ? items.filter((item) => !unreadable(item)) : items
}

/** The Anthropic reasoning inside a blob this module made, or undefined for any other value. */
export const readAnthropicReasoning = (encryptedContent: string): AnthropicReasoning | undefined => {
  if (!encryptedContent.startsWith(blobPrefix)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(encryptedContent, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!isObject(parsed) || parsed['v'] !== 1 || parsed['provider'] !== 'anthropic') return undefined
  const { type, signature, data } = parsed
  if (type === 'thinking' && typeof signature === 'string' && signature !== '') return { type, signature }
  if (type === 'redacted_thinking' && typeof data === 'string' && data !== '') return { type, data }
  return undefined
}

/**
 * The `encrypted_content` a reasoning item made from this block carries: OpenAI's own blob back,
 * an Anthropic signature or redacted data or a compatible server's blob wrapped, or undefined when
 * there is nothing to replay (no signature, or one this gateway synthesised for another provider).
 */
export const encryptedContentOf = (block: ThinkingBlock | RedactedThinkingBlock): string | undefined => {
  if (block.type === 'redacted_thinking')
    return block.data === '' ? undefined : encodeAnthropicReasoning({ type: 'redacted_thinking', data: block.data })
  const tagged = readTagged(block.signature)
  if (tagged !== undefined) {
    if (tagged.blob === '') return undefined
    return tagged.maker === undefined ? tagged.blob : encodeServerReasoning(tagged.maker, tagged.blob)
  }
  if (isForeignSignature(block.signature)) return undefined
  return encodeAnthropicReasoning({ type: 'thinking', signature: block.signature as string })
}

/** Whether the request asked for reasoning items' `encrypted_content` (the real API returns it only then). */
export const wantsEncryptedReasoning = (include: unknown): boolean =>
  Array.isArray(include) && include.includes('reasoning.encrypted_content')
