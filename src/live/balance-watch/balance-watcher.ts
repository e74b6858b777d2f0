import type { FastifyBaseLogger } from 'fastify'
import type { SecretBox } from '../../auth/secret-box.js'
import type { Db } from '../../db/connect.js'
import { recordEvent } from '../../events/outbox.js'
import { findSealedKey } from '../../exchange-keys/queries.js'
import type { UpstreamClient } from '../../market/upstream-client.js'
import { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { BALANCE_LOW } from '../../webhooks/events.js'
import { markBelow, watchedAccounts } from './queries.js'

/**
 * The assets a threshold applies to: it is a dollar amount (the spec's examples, "100"), so only the USD
 * margin assets; comparing 1.5 BNB with a threshold of 100 would fire for every holder of BNB.
 */
export const TRACKED_ASSETS = new Set(['USDT', 'USDC', 'FDUSD'])

/** How often accounts are read: GET /fapi/v2/balance costs 5 weight, so 100 accounts every 30 s is ~1,000 of the 2,400 a minute. */
export const BALANCE_WATCH_MS = 30_000

export interface BalanceWatcherOptions {
  db: Db
  secrets: SecretBox
  upstream: UpstreamClient
  log: FastifyBaseLogger
  everyMs?: number
  now?: () => number
}

/**
 * account.balance_low: reads the exchange accounts of users subscribed to it and fires once when a
 * tracked asset's available balance falls below the threshold, re-arming when it recovers.
 */
export class BalanceWatcher {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> = Promise.resolve()

  constructor(private readonly options: BalanceWatcherOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.everyMs ?? BALANCE_WATCH_MS)
    void this.tick()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.running
  }

  /** One pass over every watched account; passes never overlap. */
  tick(): Promise<void> {
    this.running = this.running.then(() => this.round()).catch((error) => this.options.log.error({ err: error }, 'balance watch round failed'))
    return this.running
  }

  private async round(): Promise<void> {
    const { db, secrets, upstream } = this.options
    const now = this.options.now ?? Date.now
    for (const account of await watchedAccounts(db)) {
      const key = await findSealedKey(db, account.user_id, account.exchange_key_id)
      if (!key) continue
      const client = new BinanceTradingClient(upstream, { apiKey: secrets.open(key.api_key_enc), apiSecret: secrets.open(key.api_secret_enc) }, now)
      const answer = await client.balances()
      if (answer.kind !== 'ok') {
        this.options.log.warn({ exchange_key_id: account.exchange_key_id, answer: answer.kind }, 'balance watch could not read an account')
        continue
      }
      const threshold = Number(account.threshold)
      for (const row of answer.value as { asset: string; balance: string; availableBalance: string }[]) {
        if (!TRACKED_ASSETS.has(row.asset)) continue
        const below = Number(row.availableBalance) < threshold
        const at = new Date(now())
        await db.transaction().execute(async (trx) => {
          if (!(await markBelow(trx, account.exchange_key_id, row.asset, below, at))) return
          await recordEvent(trx, {
            userId: account.user_id,
            type: BALANCE_LOW,
            data: { asset: row.asset, available: row.availableBalance, threshold: account.threshold, exchange_key_id: account.exchange_key_id },
            at,
          })
        })
      }
    }
  }
}
