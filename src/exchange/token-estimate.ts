// The token estimate for text no count covers: ≈ 4 characters a token. One rule for the prompt
// the router ranks by and the output svc bills where the upstream never reported it.

/** ≈ 4 characters a token, rounded up: a few characters of output are a token billed. */
export const estimateTokensFromChars = (chars: number): number => Math.ceil(chars / 4)

/**
 * The output tokens to bill: the upstream's count where it reported one (a failed stream's final
 * usage included), otherwise the estimate of the output that flowed, never below a count given so
 * far (message_start's 1).
 */
export const reportedOrEstimatedOutput = (output: number, reported: boolean, outputChars: number): number =>
  reported ? output : Math.max(output, estimateTokensFromChars(outputChars))
