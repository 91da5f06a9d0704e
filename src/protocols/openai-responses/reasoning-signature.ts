// OpenAI reasoning items carry an opaque `encrypted_content` that only OpenAI can read back. The
// neutral ThinkingBlock has one `signature` slot, which Anthropic fills with its own opaque value,
// so an OpenAI blob travels there as a gateway-made signature, base64('gw1:openai-responses:<blob>')
// (§4.8): the Anthropic codec already strips every base64('gw1:…') signature before Anthropic sees
// it, and the Responses encoders replay only these as `encrypted_content`.

const marker = 'gw1:openai-responses:'

export const tagResponsesSignature = (encryptedContent: string): string =>
  Buffer.from(marker + encryptedContent, 'utf8').toString('base64')

/** The `encrypted_content` inside a signature this module made, or undefined for any other signature. */
export const readResponsesSignature = (signature: string | undefined): string | undefined => {
  // base64('gw1:') always begins 'Z3cxO'; skip decoding Anthropic's own (long) signatures.
  if (!signature?.startsWith('Z3cxO')) return undefined
  const text = Buffer.from(signature, 'base64').toString('utf8')
  return text.startsWith(marker) ? text.slice(marker.length) : undefined
}
