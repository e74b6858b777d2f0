import type { DatabaseHandle } from '../../db/connect.js'
import { type ChannelListener, listenOnChannel } from '../../db/listen.js'
import { OpenStreams } from './open-streams.js'
import { type Notification, STRATEGY_CHANNEL, type StreamMessage } from './status-messages.js'

export type FeedListener = (message: StreamMessage) => Promise<void> | void

/**
 * This process's end of the strategy channel: one LISTEN, fanned out to the stream clients connected
 * here. Messages are handed out one at a time in arrival order (which is commit order), and a
 * publisher waiting for its token (pause) is released only once every local client has been handed
 * everything before and including it. An API key's revocation or rotation travels on the same channel
 * (migration 0021), so it closes the key's sockets here as it arrives, before any message committed after it is handed out.
 */
export class StrategyFeed {
  private readonly listeners = new Map<string, Set<FeedListener>>()
  private readonly waiters = new Map<string, () => void>()
  private listening: Promise<ChannelListener> | undefined
  private chain: Promise<void> = Promise.resolve()
  /** The streams open here, by the credential that opened them. */
  readonly streams: OpenStreams

  constructor(
    private readonly database: DatabaseHandle,
    private readonly onError: (error: unknown) => void,
    now: () => number,
  ) {
    this.streams = new OpenStreams(now)
  }

  /** Adds a listener for one strategy's messages; resolves once the channel is listened to. */
  async subscribe(strategyId: string, listener: FeedListener): Promise<() => void> {
    this.listening ??= listenOnChannel(this.database, STRATEGY_CHANNEL, (payload) => this.receive(payload), this.onError)
    await this.listening
    let set = this.listeners.get(strategyId)
    if (!set) this.listeners.set(strategyId, (set = new Set()))
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.listeners.get(strategyId) === set) this.listeners.delete(strategyId)
    }
  }

  /**
   * Resolves when the message published with `token` has been handed to this process's clients, or
   * after `timeoutMs` (a lost notification must not hold an HTTP response forever). Only waits when
   * someone here listens: with no feed started there is nobody to be first for.
   */
  waitFor(token: string, timeoutMs: number): { seen: Promise<void>; cancel: () => void } {
    if (this.listening === undefined) return { seen: Promise.resolve(), cancel: () => undefined }
    let timer: NodeJS.Timeout | undefined
    const seen = new Promise<void>((resolve) => {
      this.waiters.set(token, resolve)
      timer = setTimeout(resolve, timeoutMs)
    }).finally(() => {
      clearTimeout(timer)
      this.waiters.delete(token)
    })
    return { seen, cancel: () => this.waiters.get(token)?.() }
  }

  async close(): Promise<void> {
    const listening = this.listening
    this.listening = undefined
    this.listeners.clear()
    if (listening) await (await listening).close()
  }

  private receive(payload: string): void {
    let notification: Notification
    try {
      notification = JSON.parse(payload) as Notification
    } catch (error) {
      this.onError(error)
      return
    }
    // At once, not behind the chain: messages committed after the revocation are behind it in the chain,
    // and those before it that a slow client has not yet been handed need not reach a revoked key.
    if ('revoked' in notification) return this.streams.revoke(notification.revoked)
    const { message, token } = notification
    this.chain = this.chain.then(async () => {
      const set = this.listeners.get(message.strategy_id)
      if (set) await Promise.all([...set].map(async (listener) => listener(message))).catch(this.onError)
      if (token !== undefined) this.waiters.get(token)?.()
    })
  }
}
