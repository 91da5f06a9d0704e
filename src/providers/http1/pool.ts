// The kept-alive connections of every upstream origin, and the opening of new ones (TLS verified
// before anything is written).
import { isIP } from 'node:net'
import type { Socket } from 'bun'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { Connection, socketHandlers, staleWindowFor, TlsFailure } from './connection'
import type { Target } from './wire'

/** Idle connections kept per origin beyond which a finished one is closed. */
const maxIdlePerOrigin = 256

/** The kept-alive connections of every origin, newest first: a warm one is most likely alive. */
export class ConnectionPool {
  private readonly idle = new Map<string, Connection[]>()

  constructor(private readonly idleTimeoutMs: number) {}

  take(target: Target): Connection | undefined {
    const list = this.idle.get(target.origin)
    const now = performance.now()
    for (let connection = list?.pop(); connection; connection = list?.pop()) {
      if (!connection.reusable) continue
      if (connection.expired(now)) connection.close('graceful')
      else return connection.checkOut()
    }
    return undefined
  }

  async open(target: Target, signal: AbortSignal | undefined): Promise<Connection> {
    const { origin: key, tls, hostname, port } = target
    const connection = new Connection(
      (c) => this.release(key, c),
      (c) => this.forget(key, c),
      tls,
    )
    const started = performance.now()
    const connecting = Bun.connect<Connection>({
      hostname,
      port,
      // SNI names a host, never an IP literal (RFC 6066 §3). Bun would send the address it dials
      // unless told an empty name; the certificate is still verified against that address.
      tls: tls ? { serverName: isIP(hostname) === 0 ? hostname : '' } : undefined,
      data: connection,
      socket: socketHandlers,
    })
    // A connect that outlives the caller's abort is left to finish and then closed.
    const aborted = signal ? abortPromise(signal) : undefined
    try {
      const socket = await (aborted ? Promise.race([connecting, aborted.promise]) : connecting)
      connection.attach(socket as Socket<Connection>, this.idleTimeoutMs)
      // Nothing (an API key least of all) is written before the server's certificate verified.
      if (connection.verified)
        await (aborted ? Promise.race([connection.verified, aborted.promise]) : connection.verified)
      connection.staleWindowMs = staleWindowFor(performance.now() - started)
      return connection
    } catch (err) {
      connecting.then(
        (socket) => socket.terminate(),
        () => {},
      )
      connection.close()
      if (signal?.aborted) throw signal.reason
      throw err instanceof TlsFailure ? err : connectError(err)
    } finally {
      aborted?.dispose()
    }
  }

  private release(key: string, connection: Connection) {
    let list = this.idle.get(key)
    if (!list) {
      list = []
      this.idle.set(key, list)
    }
    if (list.length >= maxIdlePerOrigin) connection.close('graceful')
    else list.push(connection)
  }

  private forget(key: string, connection: Connection) {
    const list = this.idle.get(key)
    const at = list?.indexOf(connection) ?? -1
    if (at >= 0) list!.splice(at, 1)
  }
}

/**
 * Names the failure, not the address: the message reaches API clients, and an upstream's host
 * (an internal one, say) is the operator's business. The log line of the failed leg names the
 * provider.
 */
function connectError(err: unknown): Error {
  const code = (err as { code?: string })?.code
  if (descriptorsExhausted()) return new OutOfDescriptors(err)
  return new Error(code ? `could not connect (${code})` : 'could not connect', { cause: err })
}

/**
 * svc ran out of file descriptors: every open client and upstream connection holds one. Bun's
 * connect says ECONNREFUSED then (an audit under `ulimit -n 256`: 278 of 600 streams answered
 * "upstream unreachable" by a healthy provider, counted against its health), so a failed connect
 * checks whether the process can open anything at all.
 */
export class OutOfDescriptors extends Error {
  constructor(cause: unknown) {
    super(
      `svc is out of file descriptors (its open-files limit${openFilesLimit ? `, ${openFilesLimit},` : ''} is taken by open connections): raise the limit, or send fewer requests at once`,
      { cause },
    )
  }
}

/** The process's open-files limit as it started (Linux), for the words above: read then, while a descriptor is free. */
const openFilesLimit = (() => {
  try {
    return /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
  } catch {
    return undefined
  }
})()

/** Whether opening a file fails for want of a descriptor (EMFILE, or the system's ENFILE). */
function descriptorsExhausted(): boolean {
  try {
    closeSync(openSync('/dev/null', 'r'))
    return false
  } catch (err) {
    const code = (err as { code?: string }).code
    return code === 'EMFILE' || code === 'ENFILE'
  }
}

function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => {}
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  promise.catch(() => {})
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) }
}
