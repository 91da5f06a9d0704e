// Thinking signatures: only Anthropic-made ones may be sent back to Anthropic (others ⇒ 400).

// Gateway-made signatures are base64('gw1:<provider>:<hash>'); every such string starts with 'Z3cxO'.
const gatewayPrefix = 'Z3cxO'

/** True when Anthropic would reject the signature: missing, empty or made by this gateway. */
export const isForeignSignature = (signature: string | undefined): boolean =>
  signature === undefined || signature === '' || signature.startsWith(gatewayPrefix)
