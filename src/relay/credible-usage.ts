// Reported token counts are billed as reported, but only counts that can be counts. A compatible
// server, or a proxy in front of one, that reports a negative, fractional or absurd number would
// otherwise credit the account (a negative cost), put a float into a ledger of integer nanos, or
// spend a whole grant on one answer (measured before this check: input_tokens -1,000,000 charged
// nothing and recorded a negative cost; 1e300 took all $5 of a grant). Such a count is dropped and
// estimated instead, as for an upstream that reported none (trace.ts), and the leg says estimated.
import { utf8Length } from '../exchange/token-estimate'
import type { ExchangeResponse, Usage } from '../exchange/types'

/**
 * A thousand times the largest context window, and small enough that this many tokens at any
 * price a catalog holds (under 9,000 USD per million) still cost a safe integer of nanos.
 */
export const maxCredibleTokens = 1_000_000_000

/**
 * Web searches one answer can have run. Each search's results enter the model's context (thousands of
 * tokens apiece on Anthropic's), so no answer in the largest window comes near this; and each costs
 * far more than a token (1 cent at the usual price), so the token bound would let one reported count
 * spend any grant (measured: 10⁹ searches on an answer that offered no search tool took all of a
 * $5 grant, at a cost past 2^53 nanos).
 */
export const maxCredibleSearches = 1_000

const counts = ['input', 'cacheRead', 'cacheWrite', 'cacheWrite1h', 'output', 'reasoning', 'webSearches'] as const
export type UsageCount = (typeof counts)[number]

/** Whether `n` can be a count of tokens (or searches) an upstream really made. */
export const isCredibleCount = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= maxCredibleTokens

/**
 * The counts in `usage` that cannot be real counts; empty when every one can (the usual case, no
 * allocation). The prompt's three counts (uncached input, cache reads, cache writes) stand or fall
 * together: one of them that cannot be a count leaves the split of the prompt unknown, so the
 * others are named too and the prompt is estimated whole. OpenAI's prompt count includes its
 * cached tokens (openAIUsage): cached counts larger than it leave a negative input, and billed as
 * they stood they charged ~89× an honest answer. The 1-hour cache writes are a part of the cache
 * writes: more of them than writes in all (or fewer than none) is no split of the prompt either, and
 * a negative one would have made the 5-minute rest dearer and the whole cheaper, down to nothing.
 */
export function incredibleCounts(usage: Usage): readonly UsageCount[] {
  let found: UsageCount[] | undefined
  for (const name of counts) {
    const n = usage[name]
    if (n === undefined || (isCredibleCount(n) && (name !== 'webSearches' || n <= maxCredibleSearches))) continue
    found ??= []
    found.push(name)
  }
  if (moreThanWritten(usage) && !found?.includes('cacheWrite1h')) {
    found ??= []
    found.push('cacheWrite1h')
  }
  if (found === undefined) return noCounts
  if (found.some(isPromptCount)) {
    for (const name of promptCounts) if ((usage[name] ?? 0) !== 0 && !found.includes(name)) found.push(name)
  }
  return found
}
/** More 1-hour cache writes than cache writes in all (themselves a count): no part of them. */
const moreThanWritten = ({ cacheWrite, cacheWrite1h }: Usage): boolean =>
  cacheWrite1h !== undefined && isCredibleCount(cacheWrite) && cacheWrite1h > cacheWrite
const promptCounts = ['input', 'cacheRead', 'cacheWrite', 'cacheWrite1h'] as const
const isPromptCount = (name: UsageCount): boolean => (promptCounts as readonly UsageCount[]).includes(name)
const noCounts: readonly UsageCount[] = []

/**
 * Whether a leg is billed as the upstream reported it: reported, with every count one a usage can
 * have, and a prompt. No prompt is no tokens: a prompt count of 0 beside an output count is one the
 * upstream left out (a compatible server's message_start without usage), and is estimated.
 */
export const billedAsReported = (usage: Usage, reported: boolean): boolean =>
  reported && usage.input + usage.cacheRead + usage.cacheWrite > 0 && incredibleCounts(usage).length === 0

/** What an answer's output came to in UTF-8 bytes, for estimating the tokens of one whose count cannot be billed. */
export function answerBytes(content: ExchangeResponse['content']): number {
  let bytes = 0
  for (const block of content) {
    if (block.type === 'text') bytes += utf8Length(block.text)
    else if (block.type === 'thinking') bytes += utf8Length(block.thinking)
    else if (block.type === 'tool_use') bytes += utf8Length(JSON.stringify(block.input ?? {}))
  }
  return bytes
}
