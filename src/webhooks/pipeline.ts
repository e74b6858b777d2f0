import crypto from 'node:crypto'
import fs from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import type { SecretBox } from '../auth/secret-box.js'
import type { Config } from '../config.js'
import type { DatabaseHandle, Db } from '../db/connect.js'
import { isForeignKeyViolation } from '../db/errors.js'
import {
  type AttemptRecord,
  deleteOld,
  dispatchRound,
  dispatchWanted,
  expireHeld,
  insertTestDelivery,
  type LeasedDelivery,
  renewLeases,
  type Settlement,
  settle,
  type WebhookTally,
} from './delivery-queries.js'
import { type EventType, testEventData } from './events.js'
import { GroupCommit } from '../db/group-commit.js'
import { Lanes } from './lanes.js'
import { listenForEvents } from './outbox-listener.js'
import type { TestDeliveryResult } from './schemas.js'
import { signatureHeaders } from './signing.js'
import { WebhookTransport } from './transport.js'
import { metrics, secondsSince } from '../ops/registry.js'

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
 * A node owns the deliveries it leased this long, renewed every RENEW_MS while it holds them (waiting
 * in a lane or in flight): a node that dies loses them to another node's sweep within RUN_LEASE_MS +
 * SWEEP_MS (issue 12: under 30 s). An attempt lasts at most 10 s, so a test delivery's unrenewed lease
 * outlives it too.
 */
const RUN_LEASE_MS = 15_000
const RENEW_MS = 5_000
/**
 * A node records its outcomes at most this often, all webhooks in one statement: a node that dies
 * repeats at most this long's sends. Settling every outcome at once would add a statement per
 * delivery on the single-session PGlite.
 */
const RECORD_SPACING_MS = 100
/** Finished deliveries and their attempts are kept this long for GET /v1/webhooks/{id}/deliveries. */
const RETENTION_MS = 7 * 24 * 3_600_000
/** How often the sweep looks for due retries and events a missed notification did not announce. */
const SWEEP_MS = 1_000
const HOUSEKEEPING_MS = 60_000
/**
 * Events fanned out per round. Smaller rounds start the lanes sooner: on PostgreSQL under load a round
 * of 500 events to 8 webhooks took 380–600 ms, and the lanes waited for it; rounds run back to back
 * while the lanes have room, so a backlog still goes at the database's pace.
 */
const EVENTS_PER_ROUND = 100
const DELIVERIES_PER_ROUND = 1_000
/**
 * A node leases no more while this many deliveries wait in its lanes, and asks again as soon as fewer
 * do: memory stays bounded, in a backlog the other nodes' rounds take the rest of the events, and the
 * lanes still hold about a second's work while the next round runs (let drain to half of 2,000
 * first, they were found empty at the end of rounds; with this they held ~3,800 through a backlog).
 */
const MAX_WAITING = 4_000
/**
 * A webhook with this many deliveries waiting in its lane gets no more leased to this node until half
 * have gone (they wait in the table, due): a slow receiver holds a quarter of the room at most.
 */
const LANE_MAX = 1_000
const USER_AGENT = 'Perpetua-Webhooks/1.0'

export interface WebhookPipelineDeps {
  db: Db
  secrets: SecretBox
  transport: WebhookTransport
  now: () => number
  /** A number in [0, 1) for the retry jitter. */
  random?: () => number
}

interface Running {
  log: FastifyBaseLogger
  lanes: Lanes<LeasedDelivery>
  listener: { close(): Promise<void> }
  timers: NodeJS.Timeout[]
  wanted: boolean
  /** A round was skipped because the lanes were full: the lanes ask for one when they run low. */
  starved: boolean
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

/** What the recorder writes: an attempt's outcome, or a delivery given back unattempted. */
type Recorded = { outcome: Outcome; lease: string } | { release: Settlement }

/**
 * Webhook deliveries: outbox events become one delivery per subscribed webhook, leased by the node
 * whose dispatch round made them and sent from its lanes at once (at least once: a lease that is not
 * renewed passes to another node), and every attempt is recorded and counted against its webhook. The
 * test endpoint's synthetic event takes the same path from its first attempt on.
 */
export class WebhookPipeline {
  private running: Running | undefined
  /** The deliveries this node holds (waiting, in flight or not yet recorded), with their leases: renewed every RENEW_MS. */
  private readonly holding = new Map<string, string>()
  /** Opened secrets by their sealed form: the AES-GCM open is paid once per webhook, not per delivery. */
  private readonly openedSecrets = new Map<string, string>()
  private readonly recorder = new GroupCommit<Recorded>(
    (items) => this.record(items),
    RECORD_SPACING_MS,
    (error, items) => {
      // Unrecorded outcomes are not lost work: the leases lapse (no longer renewed) and the sweep hands
      // the deliveries out again (at least once).
      this.running?.log.warn({ err: error, deliveries: items.length }, 'recording webhook attempts failed; their deliveries will be sent again')
      for (const item of items) this.holding.delete('outcome' in item ? item.outcome.deliveryId : item.release.deliveryId)
    },
  )

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
    this.holding.set(id, lease)
    let outcome: Outcome
    try {
      outcome = await this.attempt(delivery, this.deps.secrets.open(webhook.secret_enc), 1)
      await this.record([{ outcome, lease }]).catch((error: unknown) => {
        // The webhook was deleted while the attempt was in flight: there is nothing left to count.
        if (!isForeignKeyViolation(error)) throw error
      })
    } finally {
      this.holding.delete(id)
    }
    return { test_event_id: eventId, delivered: outcome.delivered, response_status: outcome.status, response_time_ms: outcome.timeMs, error: outcome.error }
  }

  /** Starts this node's dispatcher and lanes; deliveries committed while none ran go out now. */
  async start(options: { database: DatabaseHandle; log: FastifyBaseLogger }): Promise<void> {
    if (this.running) return
    const { log } = options
    const lanes = new Lanes<LeasedDelivery>(
      (row) => this.send(row),
      (rows, why) => this.giveBack(rows, why === 'after-failure' ? RETRY_DELAYS_MS[0] : 0),
      () => this.lanesMoved(),
      LANE_MAX,
    )
    const listener = await listenForEvents(options.database, () => this.wake(), (error) => log.warn({ err: error }, 'webhook outbox listener lost its connection'))
    const sweep = setInterval(() => void this.sweep(), SWEEP_MS)
    const housekeeping = setInterval(() => void this.housekeep(), HOUSEKEEPING_MS)
    const renewal = setInterval(() => void this.renew(), RENEW_MS)
    for (const timer of [sweep, housekeeping, renewal]) timer.unref()
    this.running = { log, lanes, listener, timers: [sweep, housekeeping, renewal], wanted: false, starved: false, loop: undefined, stopping: false }
    this.wake()
  }

  /**
   * Stops the dispatcher, gives back what waits in the lanes (due at once, for any node), lets what is
   * in flight finish, and records everything.
   */
  async stop(): Promise<void> {
    const running = this.running
    if (!running) return
    running.stopping = true
    await running.listener.close()
    await running.loop
    await running.lanes.close()
    await this.recorder.drain()
    for (const timer of running.timers) clearInterval(timer)
    this.running = undefined
  }

  /** Stops the dispatcher and lanes and closes the transport's connections. */
  async close(): Promise<void> {
    await this.stop()
    await this.deps.transport.close()
  }

  /**
   * A webhook's URL, status or existence changed: what waits in its lane here is given back, due at
   * once, so a later round sends it with the new URL, holds it, or finds it gone.
   */
  changed(webhookId: string): void {
    this.running?.lanes.drop(webhookId)
  }

  /** Asks the dispatcher for a round (coalesced: at most one runs on this node at a time). */
  wake(): void {
    const running = this.running
    if (!running || running.stopping) return
    running.wanted = true
    running.loop ??= this.dispatchLoop(running)
  }

  /**
   * The sweep's look for due retries and events a missed notification did not announce: a round only when
   * there is something (dispatchWanted), or when the look fails (the round then says why). A notification
   * arriving meanwhile wakes a round itself.
   */
  private async sweep(): Promise<void> {
    const running = this.running
    if (!running || running.stopping || running.loop) return
    const wanted = await dispatchWanted(this.deps.db, new Date(this.deps.now())).catch(() => true)
    if (wanted) this.wake()
  }

  /** Runs dispatch rounds until nothing is due: new events fanned out, due deliveries handed to the lanes. */
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
   * One round, one statement: it fans out new events, leases due deliveries and holds those of
   * inactive webhooks, and returns what the leased deliveries need to be sent; they go to the lanes at
   * once. While the lanes are full no round runs (the lanes ask for one when they run low). True when
   * more is waiting.
   */
  private async dispatchRound(running: Running): Promise<boolean> {
    const room = MAX_WAITING - running.lanes.queued
    if (room <= 0) {
      running.starved = true
      return false
    }
    const now = new Date(this.deps.now())
    const lease = crypto.randomUUID()
    const dueLimit = Math.min(DELIVERIES_PER_ROUND, room)
    const round = await dispatchRound(this.deps.db, now, lease, new Date(now.getTime() + RUN_LEASE_MS), {
      events: EVENTS_PER_ROUND,
      due: dueLimit,
      full: running.lanes.full(),
    })
    const leased = round.leased.sort((a, b) => compareIds(a.id, b.id))
    for (const row of leased) this.holding.set(row.id, row.lease)
    running.lanes.add(leased)
    return round.events === EVENTS_PER_ROUND || round.due === dueLimit
  }

  /** After each send: a starved dispatcher runs again once the lanes have room, and a round follows a full lane's refill. */
  private lanesMoved(): void {
    const running = this.running
    if (!running) return
    const refill = running.lanes.takeRefill()
    const room = running.starved && running.lanes.queued < MAX_WAITING
    if (!refill && !room) return
    if (room) running.starved = false
    this.wake()
  }

  /** Sends one leased delivery and hands its outcome to the recorder; true when it was delivered. */
  private async send(row: LeasedDelivery): Promise<boolean> {
    let outcome: Outcome
    try {
      outcome = await this.attempt({ ...row, body: bodyOf(row) }, this.secretOf(row.secret_enc), row.attempts + 1)
    } catch (error) {
      // Not an answer from the receiver (attempts report those as values) but our own failure, such as
      // a secret that does not open: the delivery waits for its first retry delay and is not counted.
      this.running?.log.warn({ err: error, delivery: row.id }, 'a webhook delivery could not be attempted')
      this.giveBack([row], RETRY_DELAYS_MS[0])
      return false
    }
    this.recorder.add({ outcome, lease: row.lease })
    this.count(outcome, row.event_created_at)
    return outcome.delivered
  }

  /** One attempt in perpetua_webhook_deliveries_total; a delivery's latency from its event's creation. */
  private count(outcome: Outcome, eventCreatedAt: Date | null): void {
    const exhausted = outcome.attempt > RETRY_DELAYS_MS.length
    metrics.webhookDeliveries.inc({ outcome: outcome.delivered ? 'delivered' : exhausted ? 'gave_up' : 'failed' })
    if (outcome.delivered && eventCreatedAt) metrics.webhookDelivery.observe(secondsSince(new Date(eventCreatedAt).getTime(), this.deps.now()))
  }

  /** Gives leased deliveries back unattempted, due after `delayMs`. */
  private giveBack(rows: LeasedDelivery[], delayMs: number): void {
    const due = new Date(this.deps.now() + delayMs)
    for (const row of rows) {
      this.recorder.add({ release: { deliveryId: row.id, lease: row.lease, state: 'pending', attempts: row.attempts, nextAttemptAt: due } })
    }
  }

  private secretOf(sealed: string): string {
    let secret = this.openedSecrets.get(sealed)
    if (secret === undefined) {
      if (this.openedSecrets.size >= 1_000) this.openedSecrets.clear()
      secret = this.deps.secrets.open(sealed)
      this.openedSecrets.set(sealed, secret)
    }
    return secret
  }

  /** Keeps the leases of the deliveries this node holds from expiring. */
  private async renew(): Promise<void> {
    if (this.holding.size === 0) return
    try {
      const rows = [...this.holding].map(([id, lease]) => ({ id, lease }))
      await renewLeases(this.deps.db, rows, new Date(this.deps.now() + RUN_LEASE_MS))
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
  private async record(items: Recorded[]): Promise<void> {
    const now = new Date(this.deps.now())
    const outcomes: Outcome[] = []
    const settlements: Settlement[] = []
    for (const item of items) {
      if ('release' in item) {
        settlements.push(item.release)
        continue
      }
      const { outcome, lease } = item
      const exhausted = outcome.attempt > RETRY_DELAYS_MS.length
      const state = outcome.delivered ? 'delivered' : exhausted ? 'failed' : 'pending'
      outcomes.push(outcome)
      settlements.push({
        deliveryId: outcome.deliveryId,
        lease,
        state,
        attempts: outcome.attempt,
        nextAttemptAt: state === 'pending' ? new Date(now.getTime() + this.retryDelay(outcome.attempt)) : null,
        result: { status: outcome.status, error: outcome.error },
      })
    }
    await settle(this.deps.db, { attempts: outcomes, settlements, tallies: tallies(outcomes) }, { pauseAfter: PAUSE_AFTER_FAILURES, breakAfter: BREAK_AFTER_FAILURES }, now)
    for (const settlement of settlements) if (this.holding.get(settlement.deliveryId) === settlement.lease) this.holding.delete(settlement.deliveryId)
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

/** The delivery body (DESIGN §5): `{"id","type","timestamp","data"}`, timestamp ISO 8601 UTC. */
export function eventBody(id: string, type: string, at: Date, data: unknown): string {
  return JSON.stringify({ id, type, timestamp: at.toISOString(), data })
}

/** A delivery's body: stored for test deliveries, built from the outbox row for events (the same bytes on every attempt). */
function bodyOf(row: LeasedDelivery): string {
  if (row.body !== null) return row.body
  return eventBody(row.event_id, row.event_type, row.event_created_at ?? new Date(0), row.event_data)
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
