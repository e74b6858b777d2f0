import crypto from 'node:crypto'
import type { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { symbolRules, UpstreamHistory } from '../../backtests/upstream-history.js'
import type { DatabaseHandle, Db } from '../../db/connect.js'
import { exchangeServerTime } from '../../market/exchange-clock.js'
import { observeExchangeClock } from '../../ops/registry.js'
import { markPriceKlines } from '../../market/mark-price-klines.js'
import type { MarketData } from '../../market/market-data.js'
import { claimRuns, releaseLeases, renewLeases, RUNS_RELEASED_CHANNEL, vacuumRunTables } from '../queries.js'
import { type ChannelListener, listenOnChannel } from '../../db/listen.js'
import { KlineStreams } from '../stream/kline-streams.js'
import type { SecretBox } from '../../auth/secret-box.js'
import { BalanceWatcher } from '../balance-watch/balance-watcher.js'
import { RunFailure } from '../exchange/run-failure.js'
import { tradingClientOf } from '../exchange/trading-client-of.js'
import { withAccountBrackets } from '../exchange/account-brackets.js'
import { UserDataStreams } from '../exchange/user-data-streams.js'
import { RunCommits } from './run-commits.js'
import { SharedHistory, sharedClock } from './shared-history.js'
import { RunSandboxes } from '../../custom-templates/sandbox/run-sandbox.js'
import type { BarTiming, RunnerDeps } from './runner-deps.js'
import { StrategyRunner } from './strategy-runner.js'
import { recordStartFailure, resetStartFailures } from './start-failures.js'
import { MultiSymbolRunner } from './multi-symbol-runner.js'
import { isMultiRun } from '../multi-run.js'

/** A run this process holds: one symbol (StrategyRunner) or many (MultiSymbolRunner). */
export interface Runner {
  start(): Promise<void>
  stop(): void
  idle(): Promise<void>
}

/** DESIGN §6: leases renewed every 5 s, expiring after 15 s, so a dead owner's runs move within 30 s. */
export const LEASE_RENEW_MS = 5_000
export const LEASE_TTL_MS = 15_000
const CLAIM_BATCH = 100
/**
 * How long a stopping pool waits for its runners' steps in flight (a bar being committed, an order's answer)
 * before it frees their leases anyway: a step cut short is fenced by its lease and done again by the next owner.
 */
const STOP_IDLE_MS = 5_000

export interface RunnerPoolOptions {
  db: Db
  market: MarketData
  wsUrl: string
  log: FastifyBaseLogger
  /**
   * A PostgreSQL server other nodes share: the pool LISTENs for leases they free on stopping and claims them at
   * once. Unset (the embedded store, one node): nothing to hear.
   */
  database?: DatabaseHandle
  /** 'runs-changed' after a deploy or pause on this node: claim at once instead of at the next tick. */
  signals?: EventEmitter
  /** Opens registered exchange keys for live runs; without it this process leaves live runs alone. */
  secrets?: SecretBox
  /** How often the account.balance_low watcher reads accounts (it runs where secrets are given). */
  balanceWatchMs?: number
  renewMs?: number
  ttlMs?: number
  /** The app's clock: signed requests' timestamps and the times runners record (leases stay on the wall clock every process shares). */
  now?: () => number
  /** Every runner's stream-bar timings (bench/live.ts). */
  observe?: (timing: BarTiming) => void
  /** VACUUM the tables runners update at every bar this often: the embedded database has no autovacuum. */
  vacuumMs?: number
  /**
   * The database runs one transaction at a time (the embedded PGlite): the batch commit then skips the
   * strategy locks the lock order needs where transactions run side by side (docs/decisions/live.md, "Lock order").
   */
  serialTransactions?: boolean
}

/**
 * The runners of one process (`perpetua serve` and `perpetua worker` alike): claims deployed runs
 * whose lease is free or expired, renews its own, and stops a runner whose run was paused or taken.
 */
export class RunnerPool {
  readonly owner = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`
  readonly runners = new Map<string, Runner>()
  private readonly streams: KlineStreams
  private timer: NodeJS.Timeout | undefined
  private vacuumTimer: NodeJS.Timeout | undefined
  private stopping = false
  private ticking: Promise<void> = Promise.resolve()
  private readonly onSignal = () => void this.tick()
  private releases: Promise<ChannelListener | undefined> = Promise.resolve(undefined)
  private readonly balances: BalanceWatcher | undefined
  private readonly history: SharedHistory
  private readonly commits: RunCommits
  private readonly exchangeNow: () => Promise<number>

  private readonly userStreams: UserDataStreams | undefined
  private readonly now: () => number
  /** Sandbox threads of this node's custom-template runs (each runner closes its own when it stops). */
  private readonly sandboxes = new RunSandboxes()

  constructor(private readonly options: RunnerPoolOptions) {
    this.streams = new KlineStreams(options.wsUrl)
    this.now = options.now ?? Date.now
    this.history = new SharedHistory(new UpstreamHistory(options.market), undefined, undefined, (...query) => markPriceKlines(options.market, ...query))
    this.commits = new RunCommits(options.db, this.owner, !options.serialTransactions)
    this.exchangeNow = sharedClock(async () => {
      const serverTime = await exchangeServerTime(options.market)
      observeExchangeClock(serverTime, this.now())
      return serverTime
    })
    if (options.secrets) {
      const { db, secrets, log } = options
      this.balances = new BalanceWatcher({ db, secrets, upstream: options.market.client, log, now: this.now, ...(options.balanceWatchMs ? { everyMs: options.balanceWatchMs } : {}) })
      this.userStreams = new UserDataStreams({ wsUrl: options.wsUrl, exchangeNow: () => this.exchangeNow(), log })
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.renewMs ?? LEASE_RENEW_MS)
    if (this.options.vacuumMs) this.vacuumTimer = setInterval(() => void this.vacuum(), this.options.vacuumMs)
    this.options.signals?.on('runs-changed', this.onSignal)
    const { database, log } = this.options
    if (database?.kind === 'server') {
      // A reconnect may have missed a release: a round looks at once.
      this.releases = listenOnChannel(database, RUNS_RELEASED_CHANNEL, this.onSignal, (error) => log.warn({ err: error }, 'listening for released runs failed: runs move at the next round meanwhile'), this.onSignal).catch((error: unknown) => {
        log.warn({ err: error }, 'could not listen for released runs: runs move at the next round')
        return undefined
      })
    }
    void this.tick()
    this.balances?.start()
  }

  /** One round: renew, drop lost runs, claim new ones. Rounds never overlap. */
  tick(): Promise<void> {
    this.ticking = this.ticking.then(() => this.round()).catch((error) => this.options.log.error({ err: error }, 'runner pool round failed'))
    return this.ticking
  }

  /**
   * Stops claiming and frees every lease this pool holds, waking the other nodes to claim them (queries.ts
   * releaseLeases): a planned stop hands over at once, lease expiry is only for crashes. Answers the strategy ids freed.
   */
  async stop(): Promise<string[]> {
    clearInterval(this.timer)
    clearInterval(this.vacuumTimer)
    this.options.signals?.off('runs-changed', this.onSignal)
    this.stopping = true
    await (await this.releases)?.close()
    // Runners first: behind on bars (an overloaded process), they would keep the database busy and the
    // round awaited below waiting (a bench stage of 3,000 strategies did not stop in 5 minutes).
    for (const runner of this.runners.values()) runner.stop()
    await this.ticking
    await this.balances?.stop()
    for (const runner of this.runners.values()) runner.stop()
    // A stopped runner runs no further step. The idle ones' runs go at once, in one statement; a run with a step
    // in flight (a bar being committed, an order awaiting its answer) goes once that step committed under the
    // lease it still holds, or after STOP_IDLE_MS anyway (the next owner then does the step again, fenced).
    const held = [...this.runners]
    const idleNow = await Promise.all(held.map(([, runner]) => Promise.race([runner.idle().then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))])))
    const released = await this.release(held.filter((_, k) => idleNow[k]).map(([id]) => id))
    const deadline = Date.now() + STOP_IDLE_MS
    await Promise.all(
      held
        .filter((_, k) => !idleNow[k])
        .map(async ([id, runner]) => {
          let bound: NodeJS.Timeout | undefined
          await Promise.race([runner.idle(), new Promise((resolve) => (bound = setTimeout(resolve, Math.max(0, deadline - Date.now()))))])
          clearTimeout(bound)
          released.push(...(await this.release([id])))
        }),
    )
    this.runners.clear()
    this.streams.close()
    this.userStreams?.close()
    released.push(...(await this.release())) // what no runner here stood for (a start that had not registered)
    return released
  }

  /** Frees leases of this pool (these runs, or all) and wakes the other nodes; logged for the operator. */
  private async release(strategyIds?: readonly string[]): Promise<string[]> {
    const released = await releaseLeases(this.options.db, this.owner, strategyIds)
    if (released.length > 0) this.options.log.info({ strategy_ids: released }, 'released run leases to the other nodes')
    return released
  }

  /**
   * Every bar rewrites each run's state and its strategy's stats; without VACUUM (PGlite runs none by
   * itself) the dead versions pile up until the tables outgrow shared_buffers and every page is read from
   * the file system. Between rounds, so it never waits on a lease query.
   */
  private vacuum(): Promise<void> {
    this.ticking = this.ticking
      .then(() => vacuumRunTables(this.options.db))
      .catch((error) => this.options.log.warn({ err: error }, 'vacuum of the run tables failed'))
    return this.ticking
  }

  private async round(): Promise<void> {
    if (this.stopping) return
    const { db } = this.options
    const ttl = this.options.ttlMs ?? LEASE_TTL_MS
    const until = new Date(Date.now() + ttl)
    const kept = await renewLeases(db, this.owner, [...this.runners.keys()], until)
    for (const [id, runner] of this.runners) {
      if (!kept.has(id)) {
        runner.stop()
        this.runners.delete(id)
      }
    }
    const claimed = await claimRuns(db, this.owner, new Date(), until, CLAIM_BATCH)
    if (claimed.length > 0) this.options.log.info({ strategy_ids: claimed.map((run) => run.strategy_id) }, 'claimed runs')
    for (const run of claimed) {
      this.runners.get(run.strategy_id)?.stop()
      const deps: RunnerDeps = {
        db,
        commits: this.commits,
        history: this.history,
        markKlines: (...query) => this.history.markKlines(...query),
        streams: this.streams,
        rules: async (symbol, live) => {
          const rules = await symbolRules(this.options.market, symbol)
          // A live run margins with its account's own tiers (the exchange liquidates by them).
          if (live.dry_run || !this.options.secrets) return rules
          return withAccountBrackets(rules, await tradingClientOf(db, this.options.secrets, this.options.market.client, live, this.now), symbol)
        },
        owner: this.owner,
        now: this.now,
        exchangeNow: this.exchangeNow,
        ...(this.options.secrets ? { tradingClient: (r) => tradingClientOf(db, this.options.secrets!, this.options.market.client, r, this.now) } : {}),
        ...(this.userStreams ? { userStreams: this.userStreams } : {}),
        ...(this.options.observe ? { observe: this.options.observe } : {}),
        sandboxes: this.sandboxes,
        onError: (error, failed) => {
          // A user's module failing is the user's to fix (the strategy shows it in error), not a fault of ours.
          if (error instanceof RunFailure && error.code.startsWith('STRATEGY_')) {
            this.options.log.warn({ strategy_id: failed.strategy_id, code: error.code }, 'a custom strategy module failed; its run moved to error')
          } else this.options.log.error({ err: error, strategy_id: failed.strategy_id }, 'strategy runner step failed')
        },
      }
      const runner: Runner = isMultiRun(run) ? new MultiSymbolRunner(run, deps) : new StrategyRunner(run, deps)
      this.runners.set(run.strategy_id, runner)
      runner
        .start()
        .then(async () => {
          if (this.stopping) return
          await resetStartFailures(db, run, this.owner).catch((error) => this.options.log.warn({ err: error, strategy_id: run.strategy_id }, 'could not reset the count of failed starts'))
        })
        .catch(async (error) => {
          // Its lease is no longer renewed: it expires and a later round (here or elsewhere) starts the run afresh,
          // unless this was the third failed start in a row: then the strategy moves to error with the reason.
          if (this.runners.get(run.strategy_id) === runner) this.runners.delete(run.strategy_id)
          // A start cut short by this pool's shutdown is not the run's failure (and the database may be closing).
          if (this.stopping) return
          const failed = await recordStartFailure(db, run, this.owner, error, new Date(this.now())).catch(() => false)
          if (failed) this.options.log.warn({ err: error, strategy_id: run.strategy_id }, 'strategy runner failed to start three times in a row; the strategy moved to error')
          else this.options.log.error({ err: error, strategy_id: run.strategy_id }, 'strategy runner failed to start; the run is claimed again once its lease expires')
        })
    }
  }
}
