// The sampling parameters Claude takes, wherever it is reached (Anthropic itself, or a Chat router
// serving `anthropic/…`): what an OpenAI client sends becomes what Claude accepts, not a 400.
import type { ExchangeRequest } from '../../exchange/types'

/**
 * `temperature` and `top_p` set on `body` as Claude takes them. With thinking on it refuses temperature, and
 * top_p below 0.95. It takes temperature in 0–1 where OpenAI clients may send up to 2: the nearest
 * it accepts. Claude 4.5 and later refuse temperature and top_p together (a 400); OpenAI clients
 * may send both: temperature goes alone, as Anthropic advises setting one, and older Claudes lose
 * nothing real.
 */
export function setClaudeSampling(
  body: Record<string, unknown>,
  req: Pick<ExchangeRequest, 'temperature' | 'topP'>,
  thinkingOn: boolean,
): void {
  if (req.temperature !== undefined && !thinkingOn) body.temperature = Math.min(1, Math.max(0, req.temperature))
  if (req.topP !== undefined && body.temperature === undefined && (!thinkingOn || req.topP >= 0.95))
    body.top_p = req.topP
}
