// BYOK provider keys, sealed with AES-256-GCM under the operator's master key. The database holds
// only iv ‖ ciphertext ‖ tag (base64) and the last four characters as a hint.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/** A 32-byte key given as base64 is used as is; any other secret is stretched with SHA-256. */
/**
 * A master key of 32 random bytes, as `openssl rand -base64 32` writes it, is used as is; any other
 * text is hashed into one (SHA-256), which is only as strong as the text is hard to guess.
 */
export const isFullStrengthMasterKey = (masterKey: string) => Buffer.from(masterKey, 'base64').length === 32

function masterKeyBytes(masterKey: string): Buffer {
  return isFullStrengthMasterKey(masterKey)
    ? Buffer.from(masterKey, 'base64')
    : createHash('sha256').update(masterKey).digest()
}

export function sealProviderKey(masterKey: string, plaintext: string, accountId: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', masterKeyBytes(masterKey), iv)
  // The account id as associated data: a sealed key copied onto another account fails to open.
  cipher.setAAD(Buffer.from(accountId))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64')
}

export function openProviderKey(masterKey: string, sealed: string, accountId: string): string {
  const raw = Buffer.from(sealed, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', masterKeyBytes(masterKey), raw.subarray(0, 12))
  decipher.setAAD(Buffer.from(accountId))
  decipher.setAuthTag(raw.subarray(raw.length - 16))
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8')
}

export const providerKeyHint = (plaintext: string) => plaintext.slice(-4)
