import type { FastifyBaseLogger } from 'fastify'
import type { RawBuilder } from 'kysely'
import type { PgBoss } from 'pg-boss'
import type { DatabaseHandle, Db } from '../db/connect.js'
import type { MarketData } from '../market/market-data.js'
import type { EnginePool } from './engine-pool.js'
import type { HistoryCaches } from './history-cache.js'
import type { JobKind } from '../ops/registry.js'

/** What a node's workers start from (start-work.ts). */
export interface WorkDeps {
  db: Db
  boss: PgBoss
  /** Its notifications wake this node's workers when work is enqueued on any node, this one included (db/queue.ts). */
  database: DatabaseHandle
  market: MarketData
  now: () => number
  log: FastifyBaseLogger
  /** Engine threads of this node, which every kind of work shares. */
  workers: number
  /** Megabytes of decoded bars this node keeps between runs (HISTORY_CACHE_MB). */
  historyCacheMb: number
  /**
   * How often pg-boss looks for work without a wake-up (0.5 s unless set). Wake-ups come with every message
   * queued (listenForQueued) and every run's end, so the poll only covers what they miss.
   */
  pollSeconds?: number
}

/** What a run of any kind works with: the node's deps, its engine threads and its decoded history. */
export interface WorkContext extends WorkDeps {
  pool: EnginePool
  caches: HistoryCaches
  /** Aborts when this node begins to stop: each run in flight stops as if lost, and its work is handed back (run-fenced.ts). */
  stopping: AbortSignal
}

/** The rule recovery applies: a run silent for `lostAfterMs` lost its worker; one on its `maxAttempts`-th run fails for good. */
export interface LostWork {
  lostAfterMs: number
  maxAttempts: number
  /** When this look began (the app's clock), for what it records. */
  at: Date
}

/** What one look for lost work found: the messages that run lost work again, and what failed for good (for the log). */
export interface Recovered<Message> {
  rerun: Message[]
  failed: unknown[]
}

/**
 * One kind of work on the worker side's one loop (start-work.ts), as a task in graphile/worker's task
 * list: the loop takes its messages from `queue`, claims, beats, stops and recovers; the handler says
 * how, in its own tables, and does the work. Every run is fenced by its attempt: a message names the
 * attempt it runs, `claim` takes the work only for that attempt and only while no run holds it, and
 * `beat` keeps it only while it is still that attempt's, so a run handed on (its worker was lost) or
 * cancelled learns so within one beat and writes nothing more.
 */
export interface WorkHandler<Message extends object, Claimed> {
  /** The pg-boss queue its messages are sent to. */
  queue: string
  /** What the logs call it (plural: 'backtest jobs'). */
  name: string
  /** Runs of it at once on a node with this many engine threads. */
  concurrency(engineThreads: number): number
  /** What perpetua_jobs_worker_lost_total and perpetua_jobs_retried_total count this handler's work as. */
  kind?: JobKind
  /** Takes the work a message names for its attempt; undefined when it is not this run's (cancelled, ended, already claimed). */
  claim(work: WorkContext, message: Message): Promise<Claimed | undefined>
  /** A heartbeat (database clock); false once the run no longer owns its work. */
  beat(work: WorkContext, claimed: Claimed): Promise<boolean>
  /**
   * Does the work. `lost` aborts when a beat found the work no longer this run's, or when the node stops: the run
   * then stops and writes nothing (the work is handed on by recovery, or handed back at once).
   */
  run(work: WorkContext, claimed: Claimed, lost: AbortSignal): Promise<void>
  /**
   * Inside `trx`, which also enqueues the message returned: gives the work of a run this node stopped (SIGTERM)
   * back to the queue at the same attempt, so another node takes it now rather than when recovery finds it
   * silent; undefined when the run no longer owned it.
   */
  handBack(trx: Db, claimed: Claimed): Promise<Message | undefined>
  /** Records that the run failed (never called for a run that was stopped). */
  fail(work: WorkContext, claimed: Claimed, error: unknown): Promise<void>
  /**
   * Inside `trx`, which also enqueues the messages returned: hands each lost run on to its next attempt,
   * or fails its work on the last. SKIP LOCKED, so nodes looking at once never take the same run.
   */
  recover(trx: Db, lost: LostWork): Promise<Recovered<Message>>
  /**
   * Whether `recover` would find anything: an `exists (…)` over the same rows, without locks. Every node looks
   * each SWEEP_MS; the loop asks every handler at once in one statement and opens a transaction only for
   * those that answer true (an idle node's six statements a second were most of its work: issue 36).
   */
  anyLost(lostAfterMs: number): RawBuilder<boolean>
}

/** A handler of any kind, as the loop holds them side by side. */
export type AnyWorkHandler = WorkHandler<object, unknown>
