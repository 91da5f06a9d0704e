// The words of a refusal: what the client reads when svc turns its request away (nothing can
// record it, nothing can serve it, its credit is held) or when a provider's failure is passed on.
import { refusingWritesError } from '../ledger/write-refusals'
import { GatewayError } from '../lib/errors'
import { errorWithoutSecrets } from '../lib/redact'
import { type ContextOverflow, exclusiveToolServers, type Ranking } from '../router/rank'

/**
 * The account's credit is taken, for now, by what its requests in flight are expected to cost: a
 * 429 that the SDKs and agents retry after a pause, by when those may have ended and left some.
 */
export const creditHeld = () =>
  new GatewayError(
    'rate_limit',
    "this account's remaining credit is held by its requests in flight; retry when they have finished",
    { retryAfterSeconds: 1 },
  )

export const ledgerRefusingWrites = () =>
  refusingWritesError(
    'svc cannot record usage right now (its database refuses writes: a full disk, a read-only file or another process holding its lock), so it serves no model requests until it can; retry later',
  )

/**
 * Why no model can serve, in the error the client gets. None of these changes on a retry (no
 * credit, a prompt too long, files only Claude reads, no vision…): each is permanent, so SDKs do
 * not back off and resend the request.
 */
export function nothingServes(ranking: Ranking, profile: string): GatewayError {
  if (ranking.contextExceeded) return contextExceeded(ranking.contextExceeded)
  if (ranking.blockedByCredit) {
    const message = `no credit applies to this request under ${profile}: add a grant that covers it`
    return new GatewayError('billing', message, { permanent: true })
  }
  if (ranking.blockedByFiles) {
    return new GatewayError(
      'invalid_request',
      `this request names files stored with Anthropic (file_id), which only an Anthropic model served with your own Anthropic key (BYOK) can read, and none under ${profile} can serve it: send the file's content instead, or add your Anthropic key`,
      { permanent: true },
    )
  }
  if (ranking.blockedByExclusiveTool) {
    const { type, of } = ranking.blockedByExclusiveTool
    return new GatewayError(
      'invalid_request',
      `this request offers ${type}, a tool only ${of}'s API has, and no model of ${exclusiveToolServers[of]} under ${profile} can serve it`,
      { permanent: true, param: 'tools' },
    )
  }
  // Not `overloaded`: Claude Code retries any error whose body says overloaded_error for minutes,
  // whatever x-should-retry says (a coding-agent audit: 11 requests over 3 minutes).
  return new GatewayError(
    'api_error',
    `no model can serve this request under ${profile}: ${summarizeSkips(ranking.ranks) || 'no model on this gateway can serve it (the operator’s startup log says why)'}`,
    { status: 503, permanent: true },
  )
}

/**
 * A prompt no model under the profile can take, in Anthropic's very words for it: Claude Code
 * matches them, reads the counts and compacts the conversation (the prompt alone too long) or
 * asks for less output (the prompt and max_tokens). A Responses client gets OpenAI's code for it,
 * on which Codex stops and says the context is full (errors.ts). The counts are the router's
 * estimate against the profile's largest window; provider_ranks has each model's reason.
 */
function contextExceeded(overflow: ContextOverflow): GatewayError {
  const { inputTokens, outputTokens, contextWindow } = overflow
  const message =
    inputTokens > contextWindow
      ? `prompt is too long: ${inputTokens} tokens > ${contextWindow} maximum`
      : `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${outputTokens} > ${contextWindow}, decrease input length or \`max_tokens\` and try again`
  return new GatewayError('context_exceeded', message, { permanent: true })
}

function summarizeSkips(ranks: { model_id: string; provider_id: string; reason: string }[]): string {
  return ranks
    .slice(0, 6)
    .map((r) => `${r.model_id} via ${r.provider_id}: ${r.reason}`)
    .join('; ')
}

/**
 * A provider's failure in the words the client and the ledger get (the log keeps the provider's
 * own, settleFailedAttempt in relay.ts): never the key that called it (a compatible server may
 * quote the request's headers in its error), and, for a refused key, whose key it was.
 */
export function upstreamWords(error: GatewayError, providerId: string, byok: boolean, apiKey: string): GatewayError {
  // A rate limit of the platform's key is told in svc's words: the provider's name the gateway's
  // organization (OpenAI's org-…, Anthropic's id), its limits and what every account on the key used
  // together, and send the reader to a console that is not theirs.
  if (error.kind === 'rate_limit' && !byok) return error.withMessage(platformRateLimit(providerId))
  const said = errorWithoutSecrets(error, apiKey)
  return error.keyRefused ? error.withMessage(keyRefusal(providerId, byok, said.message)) : said
}

const platformRateLimit = (providerId: string) =>
  `${providerId} is rate-limiting the gateway's own account there (a limit its users share, not your svc key's): retry shortly`

/**
 * Whose key the provider refused, said before the provider's words: its "invalid x-api-key" alone
 * reads, to a client that just sent svc an x-api-key, as if svc refused the client's own.
 */
const keyRefusal = (providerId: string, byok: boolean, said: string) => {
  // Claude Code reads any error that says "x-api-key" (Anthropic's "invalid x-api-key") as its own
  // sign-in gone and tells the user to log in to Anthropic: the very thing svc claude spares them.
  // Anthropic's "Your credit balance is too low…" (call-upstream.ts) is the key's account's, not the
  // client's svc credit. Clients match the phrase (Claude Code shows "Credit balance too low · Add
  // funds" and Anthropic's billing page), which for the platform's key is an account not the user's.
  const words = said
    .replace(/x-api-key/gi, 'API key')
    .replace(/\byour credit balance is too low/gi, 'its credit balance ran too low')
  return byok
    ? `${providerId} refused the key stored for this account (BYOK; the stored key needs replacing): ${words}`
    : `${providerId} refused the gateway's own account there (for the gateway's operator to fix; your svc key is fine): ${words}`
}
