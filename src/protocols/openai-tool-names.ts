// Tool names for OpenAI upstreams, Chat and Responses (wire-formats §3.4, §4.2). OpenAI refuses a
// function name that does not match ^[a-zA-Z0-9_-]{1,64}$ with a 400; Anthropic takes longer ones, and
// Claude Code's MCP tools (mcp__<server>__<tool>) often are. Such a name goes upstream shortened,
// deterministically, and the answer's tool calls get the original back.
//
// Restoring needs the request's tool names, which the decoders are given (see ProviderCodec in
// providers/codecs.ts) rather than a process-wide map filled at encode time: nothing to bound or
// evict, and a shortened name comes back only to the request that sent it.

import { createHash } from 'node:crypto'

/** What OpenAI accepts as a function name. */
const openAINamePattern = /^[a-zA-Z0-9_-]{1,64}$/
/** Kept of the original: 55 + `_` + 8 hex characters of its hash = 64. */
const keptPrefix = 55

/** The name as an OpenAI upstream sees it: unchanged when OpenAI accepts it, else shortened. */
export const openAIToolName = (name: string): string => (openAINamePattern.test(name) ? name : shortenToolName(name))

/**
 * The first 55 characters (others than [a-zA-Z0-9_-] as `_`), `_`, and 8 hex characters of the
 * name's SHA-256: the same in every process and version, so a replayed history maps as before,
 * and distinct for names that share their first 55 characters.
 */
export function shortenToolName(name: string): string {
  const head = name.slice(0, keptPrefix).replace(/[^a-zA-Z0-9_-]/g, '_')
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${head}_${hash}`
}

/** The request's tool names, asked for only once an answer calls a tool. */
export type RequestToolNames = () => readonly string[]

export const noToolNames: RequestToolNames = () => []

/**
 * Maps a tool call's name back to the request's: the original for a name openAIToolName shortened,
 * any other name as it came. The map is built on the first call, so answers without tool calls
 * never look at the request.
 */
export function toolNameRestorer(toolNames: RequestToolNames): (name: string) => string {
  let originals: Map<string, string> | undefined
  return (name) => {
    if (!originals) {
      originals = new Map()
      const names = toolNames()
      for (const original of names) {
        const sent = openAIToolName(original)
        // A request that also declares the shortened form itself keeps that tool reachable.
        if (sent !== original && !names.includes(sent)) originals.set(sent, original)
      }
    }
    return originals.get(name) ?? name
  }
}
