import type { WebSocket } from 'ws'
import type { KeyRevocation } from './status-messages.js'

/**
 * Why the server ended a status stream, as WebSocket close codes with a reason a person reads: the credential's
 * end in the application range (4000–4999, RFC 6455 §7.4.2), each meaning authenticate afresh and reopen; the
 * node's stop as 1012, meaning reopen. Listed in README and docs/decisions/live.md.
 */
export const STREAM_CLOSES = {
  revoked: { code: 4001, reason: 'api key revoked' },
  rotated: { code: 4002, reason: 'api key rotated' },
  expired: { code: 4003, reason: 'app token expired' },
  /**
   * The node is stopping (SIGTERM): reconnect, with the same credential, and another node answers. 1012 is
   * IANA's "Service Restart" (RFC 6455 §11.7 registry), which says exactly that; the default close of the
   * WebSocket plugin sent none (1005), which a client cannot tell from a dropped connection.
   */
  restarting: { code: 1012, reason: 'server restarting: reconnect' },
} as const

export type StreamCloseCause = keyof typeof STREAM_CLOSES

/** What opened a stream: an API key at one version of its secret, or an app token until it expires (Unix ms). */
export type StreamCredential = { keyId: string; keyVersion: string } | { expiresAt: number }

/** setTimeout's longest delay; a longer one fires at once (Node clamps it to 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * This process's open status streams by the credential that opened them (issue 37: a stream outlived
 * the key that opened it). A key's sockets close when the feed hears the key revoked or rotated, in
 * channel order with the stream's messages; a token's socket closes at the token's expiry, by a timer.
 * App tokens are stateless JWTs with no sign-out, so expiry is the only end a token has.
 */
export class OpenStreams {
  private readonly byKey = new Map<string, Map<WebSocket, string>>()
  private readonly all = new Set<WebSocket>()

  constructor(private readonly now: () => number) {}

  /** Streams open in this process. */
  get size(): number {
    return this.all.size
  }

  /**
   * Keeps `socket` under its credential until it closes; a token's socket is closed at the token's expiry. A
   * socket that closed before it came here (while its stream was being set up) has had its 'close': it is not
   * kept, or it would stay in these maps and its expiry timer would hold the process for the token's hour.
   */
  add(socket: WebSocket, credential: StreamCredential): void {
    if (socket.readyState === socket.CLOSED) return
    this.all.add(socket)
    socket.once('close', () => this.all.delete(socket))
    if ('keyId' in credential) {
      let sockets = this.byKey.get(credential.keyId)
      if (!sockets) this.byKey.set(credential.keyId, (sockets = new Map()))
      sockets.set(socket, credential.keyVersion)
      socket.once('close', () => {
        sockets.delete(socket)
        if (sockets.size === 0 && this.byKey.get(credential.keyId) === sockets) this.byKey.delete(credential.keyId)
      })
      return
    }
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      const left = credential.expiresAt - this.now()
      if (left <= 0) return endStream(socket, 'expired')
      // Unreferenced: the socket holds the process while it is open, and a stopping process is not held by it.
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS)).unref()
    }
    socket.once('close', () => clearTimeout(timer))
    arm()
  }

  /** Ends every stream of this process (it is stopping), each with the reconnect code. */
  closeAll(): void {
    for (const socket of this.all) endStream(socket, 'restarting')
  }

  /** Closes this process's sockets of a revoked key, or of a rotated key's older secrets. */
  revoke(revocation: KeyRevocation): void {
    const sockets = this.byKey.get(revocation.key_id)
    if (!sockets) return
    for (const [socket, version] of sockets) {
      if (revocation.reason === 'revoked') endStream(socket, 'revoked')
      else if (version !== revocation.version) endStream(socket, 'rotated')
    }
  }
}

/** Ends a stream saying why; nothing is sent on it afterwards (a send checks the socket is OPEN). */
export function endStream(socket: WebSocket, cause: StreamCloseCause): void {
  const { code, reason } = STREAM_CLOSES[cause]
  socket.close(code, reason)
}
