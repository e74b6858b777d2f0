import crypto from 'node:crypto'
import fs from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import type { PgBoss } from 'pg-boss'
import type { SecretBox } from '../auth/secret-box.js'
import type { Config } from '../config.js'
import type { DatabaseHandle, Db } from '../db/connect.js'
import { isForeignKeyViolation } from '../db/errors.js'
import {
  type AttemptRecord,
  deleteOld,
  dispatchRound,
  expireHeld,
  insertTestDelivery,
  type LeasedDelivery,
  renewLeases,
  type Settlement,
  settle,
  takeLeased,
  type WebhookTally,
} from './delivery-queries.js'
import { type EventType, testEventData } from './events.js'
import { GroupCommit } from '../db/group-commit.js'
import { listenForEvents } from './outbox-listener.js'
import type { TestDeliveryResult } from './schemas.js'
import { signatureHeaders } from './signing.js'
import { WebhookTransport } from './transport.js'

export const DELIVERY_QUEUE = 'webhook-delivery'
/** Waits before each retry (DESIGN §5): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h; 8 attempts in all. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000] as const
/** Each wait is spread by ±10 %, so receivers that failed together are not retried together. */
export const RETRY_JITTER = 0.1
/** Consecutive failures that pause an active webhook, and that mark it broken (spec "Limits"). */
export const PAUSE_AFTER_FAILURES = 10
export const BREAK_AFTER_FAILURES = 50
/** Deliveries held while a webhook is not active are given up after this long. */
export const HOLD_LIMIT_MS = 72 * 3_600_000
/**
 * Deliveries a round queued wait this long for a worker to take their job; past it a sweep queues
 * them again. The job is durable in pg-boss, so a node's death does not strand them: this only covers
 * the moment between a round's two statements, and must outlast the queue's backlog.
 */
const QUEUED_LEASE_MS = 5 * 60_000
/**
 * A running job owns its deliveries this long, renewed every RENEW_MS while it runs: a node that dies
 * mid-job loses its deliveries to another node's sweep within RUN_LEASE_MS + SWEEP_MS (issue 12: under
 * 30 s; it was QUEUED_LEASE_MS). An attempt lasts at most 10 s, so a test delivery's unrenewed lease
 * outlives it too.
 */
const RUN_LEASE_MS = 15_000
const RENEW_MS = 5_000
/**
 * A running job records its outcomes at most this often (and at its end): a node that dies repeats at
 * most this long's sends, and a short job still settles in one statement, as before. Settling every
 * outcome at once would add a statement per delivery on the single-session PGlite.
 */
const RECORD_SPACING_MS = 100
/** Finished deliveries and their attempts are kept this long for GET /v1/webhooks/{id}/deliveries. */
const RETENTION_MS = 7 * 24 * 3_600_000
/** How often the sweep looks for due retries and events a missed notification did not announce. */
const SWEEP_MS = 1_000
const HOUSEKEEPING_MS = 60_000
const EVENTS_PER_ROUND = 500
const DELIVERIES_PER_ROUND = 1_000
/** Deliveries per queue job: one job costs one fetch, one load, one settling statement and one completion. */
const DELIVERIES_PER_JOB = 100
/** Queue workers per node, each fetching up to JOBS_PER_FETCH jobs and sending them at once. */
const WORKERS = 4
const JOBS_PER_FETCH = 4
const USER_AGENT = 'Perpetua-Webhooks/1.0'

interface DeliveryJob {
  ids: string[]
  lease: string
}

export interface WebhookPipelineDeps {
  db: Db
  secrets: SecretBox
  transport: WebhookTransport
  now: () => number
  /** A number in [0, 1) for the retry jitter. */
  random?: () => number
}

interface Running {
  boss: PgBoss
  log: FastifyBaseLogger
  /** One pg-boss worker per id: notifyWorker wakes only the worker of the id it is given. */
  workerIds: string[]
  nextWorker: number
  listener: { close(): Promise<void> }
  timers: NodeJS.Timeout[]
  wanted: boolean
  loop: Promise<void> | undefined
  stopping: boolean
}

/** Who a delivery goes to and what it carries; enough to sign and send it. */
interface Sendable {
  id: string
  webhook_id: string
  event_id: string
  event_type: string
  body: string
  url: string
}

type Outcome = AttemptRecord

/**
 * Webhook deliveries: outbox events become one delivery per subscribed webhook, queue jobs send them
 * (pg-boss, at least once), and every attempt is recorded and counted against its webhook. The test
 * endpoint's synthetic event takes the same path from its first attempt on.
 */
export class WebhookPipeline {
  private running: Running | undefined
  /** The deliveries this node's jobs and test requests are sending, by lease: renewed every RENEW_MS. */
  private readonly holding = new Set<{ ids: string[]; lease: string }>()

  constructor(private readonly deps: WebhookPipelineDeps) {}

  /**
   * Sends a synthetic event to one webhook now and waits for the answer (at most the transport's
   * 10 s). It is a real delivery: signed like any other, recorded, counted, and retried on failure.
   */
  async testDelivery(
    webhook: { id: string; url: string; secret_enc: string; balance_low_threshold: string | null },
    type: EventType,
  ): Promise<TestDeliveryResult> {
    const { db, now } = this.deps
    const at = new Date(now())
    const eventId = `evt_test_${crypto.randomBytes(6).toString('hex')}`
    const body = eventBody(eventId, type, at, testEventData(type, { id: webhook.id, balanceLowThreshold: webhook.balance_low_threshold }, at))
    const lease = crypto.randomUUID()
    const id = await insertTestDelivery(db, { webhookId: webhook.id, eventId, eventType: type, body, lease, leaseUntil: new Date(at.getTime() + RUN_LEASE_MS), at })
    const delivery = { id, webhook_id: webhook.id, event_id: eventId, event_type: type, body, url: webhook.url }
    const held = { ids: [id], lease }
    this.holding.add(held)
    let outcome: Outcome
    try {
      outcome = await this.attempt(delivery, this.deps.secrets.open(webhook.secret_enc), 1)
      await this.record([outcome], [], lease).catch((error: unknown) => {
        // The webhook was deleted while the attempt was in flight: there is nothing left to count.
        if (!isForeignKeyViolation(error)) throw error
      })
    } finally {
      this.holding.delete(held)
    }
    return { test_event_id: eventId, delivered: outcome.delivered, response_status: outcome.status, response_time_ms: outcome.timeMs, error: outcome.error }
  }

  /** Starts this node's dispatcher and queue workers; deliveries committed while none ran go out now. */
  async start(options: { database: DatabaseHandle; boss: PgBoss; log: FastifyBaseLogger }): Promise<void> {
    if (this.running) return
    const { boss, log } = options
    await ensureDeliveryQueue(boss)
    const workerIds: string[] = []
    for (let i = 0; i < WORKERS; i++) {
      workerIds.push(
        await boss.work<DeliveryJob>(
          DELIVERY_QUEUE,
          { batchSize: JOBS_PER_FETCH, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
          async (jobs) => void (await Promise.all(jobs.map((job) => this.runJob(job.data)))),
        ),
      )
    }
    const listener = await listenForEvents(options.database, () => this.wake(), (error) => log.warn({ err: error }, 'webhook outbox listener lost its connection'))
    const sweep = setInterval(() => this.wake(), SWEEP_MS)
    const housekeeping = setInterval(() => void this.housekeep(), HOUSEKEEPING_MS)
    const renewal = setInterval(() => void this.renew(), RENEW_MS)
    for (const timer of [sweep, housekeeping, renewal]) timer.unref()
    this.running = { boss, log, workerIds, nextWorker: 0, listener, timers: [sweep, housekeeping, renewal], wanted: false, loop: undefined, stopping: false }
    this.wake()
  }

  async stop(): Promise<void> {
    const running = this.running
    if (!running) return
    running.stopping = true
    for (const timer of running.timers) clearInterval(timer)
    await running.listener.close()
    await running.loop
    for (const id of running.workerIds) await running.boss.offWork(DELIVERY_QUEUE, { id }).catch(() => undefined)
    this.running = undefined
  }

  /** Stops the workers and closes the transport's connections. */
  async close(): Promise<void> {
    await this.stop()
    await this.deps.transport.close()
  }

  /** Asks the dispatcher for a round (coalesced: at most one runs on this node at a time). */
  wake(): void {
    const running = this.running
    if (!running || running.stopping) return
    running.wanted = true
    running.loop ??= this.dispatchLoop(running)
  }

  /** Runs dispatch rounds until nothing is due: new events fanned out, due deliveries handed to jobs. */
  async runDue(): Promise<void> {
    const running = this.running
    if (!running) throw new Error('the webhook pipeline is not started on this node')
    this.wake()
    while (running.loop) await running.loop
  }

  private async dispatchLoop(running: Running): Promise<void> {
    try {
      while (running.wanted && !running.stopping) {
        running.wanted = false
        if (await this.dispatchRound(running)) running.wanted = true
      }
    } catch (error) {
      running.log.warn({ err: error }, 'webhook dispatch failed; the sweep tries again')
    } finally {
      running.loop = undefined
    }
  }

  /**
   * One round: one statement fans out new events, leases due deliveries and holds those of inactive
   * webhooks; one more enqueues the leased deliveries as jobs, and local workers are woken. The two are
   * not one transaction on purpose: a crash between them leaves leased deliveries without a job, and
   * the lease's expiry hands them out again (at least once), while every round saves a BEGIN and a
   * COMMIT on the single-session embedded database. True when more is waiting.
   */
  private async dispatchRound(running: Running): Promise<boolean> {
    const now = new Date(this.deps.now())
    const lease = crypto.randomUUID()
    const round = await dispatchRound(this.deps.db, now, lease, new Date(now.getTime() + QUEUED_LEASE_MS), { events: EVENTS_PER_ROUND, due: DELIVERIES_PER_ROUND })
    const jobs = packJobs(round.leased).map((ids) => ({ data: { ids, lease } satisfies DeliveryJob }))
    if (jobs.length > 0) {
      await running.boss.insert(DELIVERY_QUEUE, jobs)
      const wake = Math.min(running.workerIds.length, Math.ceil(jobs.length / JOBS_PER_FETCH))
      for (let i = 0; i < wake; i++) running.boss.notifyWorker(running.workerIds[running.nextWorker++ % running.workerIds.length]!)
    }
    return round.events === EVENTS_PER_ROUND || round.due === DELIVERIES_PER_ROUND
  }

  /**
   * Sends one job's deliveries: webhooks in parallel, each webhook's deliveries in creation order.
   * After a failure the webhook's remaining deliveries in the job wait for the first retry delay
   * instead of meeting the same failing receiver at once. The job first takes its deliveries under a
   * short lease of its own (renewed while it runs), and records each outcome as soon as it can (group
   * commit): if this node dies, another sends what is left within seconds, and repeats only what was
   * in flight or sent in the last write's time.
   */
  private async runJob(job: DeliveryJob): Promise<void> {
    const { db, now, secrets } = this.deps
    const held = { ids: job.ids, lease: crypto.randomUUID() }
    this.holding.add(held)
    try {
      const rows = await takeLeased(db, job.ids, job.lease, held.lease, new Date(now() + RUN_LEASE_MS), new Date(now()))
      const given: Array<{ row: LeasedDelivery; dueAt: 'hold' | 'retry' }> = []
      const groups = new Map<string, LeasedDelivery[]>()
      for (const row of rows) {
        if (row.status !== 'active') given.push({ row, dueAt: 'hold' })
        else if (groups.has(row.webhook_id)) groups.get(row.webhook_id)!.push(row)
        else groups.set(row.webhook_id, [row])
      }
      const recorder = new GroupCommit<Outcome>((outcomes) => this.record(outcomes, [], held.lease), RECORD_SPACING_MS)
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const secret = secrets.open(group[0]!.secret_enc)
          for (const [i, row] of group.entries()) {
            const outcome = await this.attempt({ ...row, body: bodyOf(row) }, secret, row.attempts + 1)
            recorder.add(outcome)
            if (!outcome.delivered) {
              for (const rest of group.slice(i + 1)) given.push({ row: rest, dueAt: 'retry' })
              break
            }
          }
        }),
      )
      await recorder.drain()
      if (given.length === 0) return
      const at = now()
      const released: Settlement[] = given.map(({ row, dueAt }) => ({
        deliveryId: row.id,
        state: 'pending',
        attempts: row.attempts,
        nextAttemptAt: dueAt === 'hold' ? null : new Date(at + RETRY_DELAYS_MS[0]),
      }))
      await this.record([], released, held.lease)
    } finally {
      this.holding.delete(held)
    }
  }

  /** Keeps the leases of the deliveries this node is sending from expiring. */
  private async renew(): Promise<void> {
    if (this.holding.size === 0) return
    try {
      await renewLeases(this.deps.db, [...this.holding], new Date(this.deps.now() + RUN_LEASE_MS))
    } catch (error) {
      this.running?.log.warn({ err: error }, 'renewing webhook delivery leases failed')
    }
  }

  private async attempt(delivery: Sendable, secret: string, attempt: number): Promise<Outcome> {
    const at = new Date(this.deps.now())
    const headers = {
      ...signatureHeaders(secret, delivery.event_id, Math.floor(at.getTime() / 1000), delivery.body),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    }
    const result = await this.deps.transport.post(delivery.url, headers, delivery.body)
    return {
      deliveryId: delivery.id,
      webhookId: delivery.webhook_id,
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      attempt,
      at,
      delivered: result.delivered,
      status: result.status,
      timeMs: result.timeMs,
      error: result.error,
    }
  }

  /** Records attempts, schedules retries, gives back unattempted deliveries, and counts attempts against their webhooks. */
  private async record(outcomes: Outcome[], released: Settlement[], lease: string): Promise<void> {
    const now = new Date(this.deps.now())
    const settlements: Settlement[] = outcomes.map((outcome) => {
      const exhausted = outcome.attempt > RETRY_DELAYS_MS.length
      const state = outcome.delivered ? 'delivered' : exhausted ? 'failed' : 'pending'
      return {
        deliveryId: outcome.deliveryId,
        state,
        attempts: outcome.attempt,
        nextAttemptAt: state === 'pending' ? new Date(now.getTime() + this.retryDelay(outcome.attempt)) : null,
        result: { status: outcome.status, error: outcome.error },
      }
    })
    await settle(
      this.deps.db,
      { attempts: outcomes, settlements: [...settlements, ...released], tallies: tallies(outcomes) },
      lease,
      { pauseAfter: PAUSE_AFTER_FAILURES, breakAfter: BREAK_AFTER_FAILURES },
      now,
    )
  }

  /** The wait after failed attempt `attempt` (1-based), with jitter. */
  private retryDelay(attempt: number): number {
    const base = RETRY_DELAYS_MS[attempt - 1]!
    const random = this.deps.random ?? Math.random
    return Math.round(base * (1 + RETRY_JITTER * (2 * random() - 1)))
  }

  private async housekeep(): Promise<void> {
    const running = this.running
    if (!running || running.stopping) return
    const now = this.deps.now()
    try {
      await expireHeld(this.deps.db, new Date(now - HOLD_LIMIT_MS), new Date(now), 'given up: held for more than 72 h while the webhook was not active')
      await deleteOld(this.deps.db, new Date(now - RETENTION_MS), 1_000)
    } catch (error) {
      running.log.warn({ err: error }, 'webhook housekeeping failed')
    }
  }
}

/** The pipeline of one process, with its transport configured from the environment. */
export function createWebhookPipeline(
  config: Pick<Config, 'webhookAllowPrivateHosts' | 'webhookCaFile' | 'webhookTimeoutMs'>,
  db: Db,
  secrets: SecretBox,
  now: () => number,
): WebhookPipeline {
  const ca = config.webhookCaFile === undefined ? undefined : [fs.readFileSync(config.webhookCaFile, 'utf8')]
  const transport = new WebhookTransport({ allowPrivateHosts: config.webhookAllowPrivateHosts, timeoutMs: config.webhookTimeoutMs, ca })
  return new WebhookPipeline({ db, secrets, transport, now })
}

/** The queue deliveries are sent through; pg-boss needs it before the first send. */
export async function ensureDeliveryQueue(boss: PgBoss): Promise<void> {
  // A job whose worker died is retried by pg-boss; our lease makes a second run of a settled job a no-op.
  await boss.createQueue(DELIVERY_QUEUE, { retryLimit: 3, retryDelay: 5, expireInSeconds: 600 })
  // Refills pg-boss's queue cache, as ensureBacktestQueue explains: a send inside our transaction
  // that missed the cache would wait for the transaction's own connection.
  await boss.getJobById(DELIVERY_QUEUE, crypto.randomUUID())
}

/** The delivery body (DESIGN §5): `{"id","type","timestamp","data"}`, timestamp ISO 8601 UTC. */
export function eventBody(id: string, type: string, at: Date, data: unknown): string {
  return JSON.stringify({ id, type, timestamp: at.toISOString(), data })
}

/** A delivery's body: stored for test deliveries, built from the outbox row for events (the same bytes on every attempt). */
function bodyOf(row: LeasedDelivery): string {
  if (row.body !== null) return row.body
  return eventBody(row.event_id, row.event_type, row.event_created_at ?? new Date(0), row.event_data)
}

/** Splits leased deliveries into jobs, keeping each webhook's deliveries together and in creation order. */
function packJobs(due: Array<{ id: string; webhook_id: string }>): string[][] {
  const sorted = [...due].sort((a, b) => compareIds(a.id, b.id))
  const groups = new Map<string, string[]>()
  for (const row of sorted) {
    const group = groups.get(row.webhook_id)
    if (group) group.push(row.id)
    else groups.set(row.webhook_id, [row.id])
  }
  const jobs: string[][] = []
  let current: string[] = []
  for (const ids of groups.values()) {
    for (let i = 0; i < ids.length; i += DELIVERIES_PER_JOB) {
      const piece = ids.slice(i, i + DELIVERIES_PER_JOB)
      if (current.length + piece.length > DELIVERIES_PER_JOB) {
        jobs.push(current)
        current = []
      }
      current.push(...piece)
    }
  }
  if (current.length > 0) jobs.push(current)
  return jobs
}

/** bigint ids as digit strings, compared as numbers. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}

/** Per webhook, what a run of outcomes (in the order they were made) does to its counters. */
function tallies(outcomes: Outcome[]): WebhookTally[] {
  const byWebhook = new Map<string, WebhookTally>()
  for (const outcome of outcomes) {
    const tally = byWebhook.get(outcome.webhookId) ?? {
      webhookId: outcome.webhookId,
      failures: 0,
      failuresAfterLastSuccess: null,
      lastAttemptAt: outcome.at,
      lastSuccessAt: null,
      gone: false,
    }
    if (outcome.at > tally.lastAttemptAt) tally.lastAttemptAt = outcome.at
    if (outcome.delivered) {
      tally.failuresAfterLastSuccess = 0
      tally.lastSuccessAt = outcome.at
      tally.gone = false
    } else {
      tally.failures += 1
      if (tally.failuresAfterLastSuccess !== null) tally.failuresAfterLastSuccess += 1
      if (outcome.status === 410) tally.gone = true
    }
    byWebhook.set(outcome.webhookId, tally)
  }
  return [...byWebhook.values()]
}
