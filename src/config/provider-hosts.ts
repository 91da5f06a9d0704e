// Which server a provider's base URL names, for the defaults a provider section may leave out:
// Anthropic or OpenAI itself, OpenRouter, Ollama, Google's endpoints; any other host is a
// compatible server of its dialect.
import type { ThoughtSignatureForm } from '../protocols/thought-signature'

/**
 * A Chat server known to take `top_k`: OpenRouter, by its id or host (it passes the field to the
 * models that take it and drops it for the rest). vLLM, llama.cpp and SGLang take it too but run on
 * any host, so their files say so; OpenAI and Mistral refuse the field, so it is off by default.
 */
export function takesTopK(id: string, baseUrl: string): boolean {
  const host = hostOf(baseUrl)
  return id === 'openrouter' || host === 'openrouter.ai' || host.endsWith('.openrouter.ai')
}

/**
 * Anthropic's own API: the well-known provider (whatever its URL: a test's simulator plays it) or
 * a host under anthropic.com, which only Anthropic serves. Any other host speaking its dialect is
 * taken for a compatible server (DeepSeek, Kimi, GLM, MiniMax), which signs thinking its own way;
 * a proxy in front of Anthropic cannot be told from one by its URL and says so in the file.
 */
export function isAnthropicItself(id: string, baseUrl: string): boolean {
  if (id === 'anthropic') return true
  const host = hostOf(baseUrl)
  return host === 'anthropic.com' || host.endsWith('.anthropic.com')
}

/**
 * OpenAI's own Responses API: the well-known provider, api.openai.com, or Azure OpenAI (which runs
 * OpenAI's). Any other host speaking Responses is taken for a compatible server (vLLM, llama.cpp,
 * Ollama, LM Studio, OpenRouter), which refuses OpenAI's own tool types; a proxy in front of OpenAI
 * cannot be told from one by its URL and says so in the file.
 */
export function isOpenAIItself(id: string, baseUrl: string): boolean {
  if (id === 'openai') return true
  const host = hostOf(baseUrl)
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com')
}

/**
 * Ollama: a provider named so, its own port (11434) or its cloud. Its Responses endpoint writes a
 * reasoning item's thinking as plain text in `encrypted_content` and reads it back only from there.
 */
export function isOllama(id: string, baseUrl: string): boolean {
  if (id === 'ollama') return true
  const url = URL.parse(baseUrl)
  const host = url?.hostname.toLowerCase() ?? ''
  return url?.port === '11434' || host === 'ollama.com' || host.endsWith('.ollama.com')
}

/**
 * How a host takes Gemini's thought signatures back: Google's own OpenAI-compatible endpoints (Gemini
 * API, Vertex AI) in `extra_content`, OpenRouter in `reasoning_details`. A proxy in front of either
 * says so in the file.
 */
export function thoughtSignatureFormOf(baseUrl: string): ThoughtSignatureForm {
  const host = hostOf(baseUrl)
  if (host === 'generativelanguage.googleapis.com' || host.endsWith('aiplatform.googleapis.com')) return 'extra_content'
  return host === 'openrouter.ai' ? 'reasoning_details' : 'off'
}

const hostOf = (url: string): string => URL.parse(url)?.hostname.toLowerCase() ?? ''
