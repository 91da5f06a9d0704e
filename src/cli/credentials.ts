// Where `svc login` keeps the gateway URL and key: <config dir>/credentials.json, mode 0600 in a
// 0700 directory, so only the user can read the key.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { userConfigDir } from '../config/load'
import type { Io } from './context'
import { UsageError } from './context'

export interface Credentials {
  gateway: string
  api_key: string
  key_id?: string
  account?: string
  /**
   * `given`: a key the user already had (`svc login --with-token`), perhaps used elsewhere too:
   * signing out forgets it and leaves it working. Absent: a key the device sign-in made for this
   * machine (files written before this field held only those), revoked on signing out.
   */
  origin?: 'given'
}

export const credentialsPath = (io: Io) => join(userConfigDir(io.env), 'credentials.json')

export function readCredentials(io: Io): Credentials | undefined {
  const path = credentialsPath(io)
  if (!existsSync(path)) return undefined
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Credentials
    return parsed.gateway && parsed.api_key ? parsed : undefined
  } catch {
    return undefined
  }
}

export function writeCredentials(io: Io, credentials: Credentials): string {
  const dir = userConfigDir(io.env)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const path = credentialsPath(io)
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return path
}

export const forgetCredentials = (io: Io) => rmSync(credentialsPath(io), { force: true })

/** $SVC_URL and $SVC_API_KEY win over the stored sign-in, for scripts and CI. */
export function requireCredentials(io: Io): Credentials {
  const stored = readCredentials(io)
  const gateway = io.env.SVC_URL ?? stored?.gateway
  const apiKey = io.env.SVC_API_KEY ?? stored?.api_key
  if (!gateway || !apiKey) throw new UsageError('not signed in: run `svc login [URL]` (or set SVC_URL and SVC_API_KEY)')
  return { ...stored, gateway: gateway.replace(/\/+$/, ''), api_key: apiKey }
}
