import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { Db } from '../src/db/connect.js'
import { startQueue } from '../src/db/queue.js'
import { recordEvent } from '../src/events/outbox.js'
import { createServices, type Services } from '../src/services.js'
import { openStorage, type Storage } from '../src/storage.js'
import { findOrCreateUserByEmail } from '../src/auth/queries.js'
import { createServerDatabase, dropServerDatabase } from '../test/support/database.js'
import { atLeast, atMost } from './support/ceiling.js'
import { log } from './support/log.js'
import { REPO_ROOT } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Issue 13's goals (issue 5's were 1,000/s and 100 ms), both on the 8-webhook run: backlog drain, and paced p99 event → receipt. */
const GOAL_BACKLOG_PER_S = 5_000
const GOAL_WEBHOOKS = 8
const GOAL_P99_MS = 40
/** Deliveries per measured run: events × subscribed webhooks. */
const DELIVERIES = 10_000
const EVENTS_PER_TRANSACTION = 100
/** The paced run: one event per transaction at this many deliveries per second, for --duration seconds. */
const PACED_DELIVERIES_PER_S = 500
const WARMUP_DELIVERIES = 1_000
/** One webhook is bound by its receiver's round trip (its deliveries go out in order, one at a time); eight run side by side. */
const WEBHOOK_COUNTS = [1, 8]

interface ReceiverReport {
  received: number
  unique: number
  badSignatures: number
  latenciesMs: number[]
  /** [data.seq, receipt time] per delivery. */
  receipts: Array<[number, number]>
  /** The receiver's CPU time since its last reset. */
  cpuUs: number
}

/**
 * Webhook deliveries through the whole pipeline, as `perpetua serve` runs it on the embedded
 * database (or, with BENCH_DATABASE_URL, a PostgreSQL server's admin URL: a fresh database there per
 * webhook count, dropped after): events written to the outbox in their
 * own transactions, fanned out, queued (pg-boss), signed, sent over HTTPS with certificate checks to
 * a receiver in another process, and every attempt recorded. The receiver verifies every signature
 * and measures event → receipt. Each webhook count runs on a fresh database.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  const loadBefore = loadAverage()
  const receiver = await startReceiver()
  const databaseUrl = process.env.BENCH_DATABASE_URL
  const failures: string[] = []
  const runs: Record<string, unknown> = {}
  try {
    for (const webhooks of WEBHOOK_COUNTS) {
      const measured = await measure(receiver, webhooks, options.durationS, databaseUrl)
      if (measured.badSignatures > 0) failures.push(`${measured.badSignatures} deliveries failed the receiver's signature check`)
      runs[`webhooks_${webhooks}`] = measured.report
    }
  } finally {
    receiver.stop()
  }
  type Run = { backlog: { deliveries_per_s: number }; paced: { event_to_receipt: { p99_ms: number | null } } }
  const goalRun = runs[`webhooks_${GOAL_WEBHOOKS}`] as Run
  const backlog = goalRun.backlog.deliveries_per_s
  const p99 = goalRun.paced.event_to_receipt.p99_ms ?? Infinity
  const report = {
    suite: 'webhooks',
    setup: {
      database: databaseUrl ? 'PostgreSQL server (BENCH_DATABASE_URL)' : 'embedded PGlite (the npm start default)',
      receiver: 'HTTPS on 127.0.0.1 in another process; certificate from a test CA, verified; every signature checked',
      event: 'backtest.job_done written with recordEvent inside its transaction; every webhook subscribes through backtest.*',
      runs: {
        backlog: `${DELIVERIES} deliveries already committed (pipeline stopped), from starting the pipeline to the last receipt: the pipeline alone; CPU per delivery of this process (the service, as nothing else runs here then) and of the receiver, steadier than rates on a shared host`,
        burst: `the same while events are written in transactions of ${EVENTS_PER_TRANSACTION} (producer and pipeline share the database)`,
        paced: `one event per transaction at ${PACED_DELIVERIES_PER_S} deliveries/s for --duration s: event (before its transaction) to receipt, the goal's figure; and from the producer's commit to receipt, the pipeline's own part`,
      },
    },
    ...runs,
    goal: {
      [`backlog_deliveries_per_s_${GOAL_WEBHOOKS}_webhooks`]: atLeast(backlog, GOAL_BACKLOG_PER_S),
      [`paced_p99_ms_event_to_receipt_${GOAL_WEBHOOKS}_webhooks`]: atMost(p99, GOAL_P99_MS),
      database: databaseUrl ? 'PostgreSQL server' : 'embedded PGlite (issue 13 states its goals on PostgreSQL)',
    },
    load_average: { before: loadBefore, after: loadAverage(), cores: os.availableParallelism() },
    node: process.version,
  }
  return { report, failures }
}

async function measure(receiver: ReceiverProcess, webhooks: number, durationS: number, adminUrl: string | undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-webhooks-'))
  const databaseUrl = adminUrl ? await createServerDatabase(adminUrl) : undefined
  const config = loadConfig({
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    UPSTREAM_URL: 'http://127.0.0.1:9', // no market data is used
  })
  const storage = await openStorage(config, 'bench')
  const boss = await startQueue(storage.database, (error) => log(`queue error: ${String(error)}`))
  const services = createServices(config, storage.database, Date.now, boss)
  const start = () => services.webhooks.start({ database: storage.database, log: pino({ level: 'warn' }, process.stderr) })
  await start()
  try {
    const db = storage.database.db
    const userId = await findOrCreateUserByEmail(db, `bench-webhooks-${webhooks}@perpetua.test`)
    receiver.send({ secrets: await createWebhooks(services, userId, receiver.url, webhooks) })
    const events = (deliveries: number) => Math.ceil(deliveries / webhooks)
    let sequence = 0
    const committedAt = new Map<number, number>()
    const emit = (count: number) => emitEvents(db, userId, count, () => ++sequence, committedAt)

    log(`${webhooks} webhook(s): warm-up`)
    receiver.send({ reset: true })
    for (let i = 0; i < events(WARMUP_DELIVERIES); i += EVENTS_PER_TRANSACTION) await emit(Math.min(EVENTS_PER_TRANSACTION, events(WARMUP_DELIVERIES) - i))
    await receiver.waitForUnique(events(WARMUP_DELIVERIES) * webhooks, 60_000)

    await services.webhooks.stop()
    for (let i = 0; i < events(DELIVERIES); i += EVENTS_PER_TRANSACTION) await emit(Math.min(EVENTS_PER_TRANSACTION, events(DELIVERIES) - i))
    receiver.send({ reset: true })
    const drainStarted = Date.now()
    const drainCpu = process.cpuUsage()
    await start()
    const backlog = await receiver.waitForUnique(events(DELIVERIES) * webhooks, 120_000)
    const drainMs = Date.now() - drainStarted
    const drainCpuUs = cpuSince(drainCpu)
    log(`${webhooks} webhook(s): backlog ${rate(backlog.unique, drainMs)} deliveries/s`)

    receiver.send({ reset: true })
    const burstStarted = Date.now()
    for (let i = 0; i < events(DELIVERIES); i += EVENTS_PER_TRANSACTION) await emit(Math.min(EVENTS_PER_TRANSACTION, events(DELIVERIES) - i))
    const producedMs = Date.now() - burstStarted
    const burst = await receiver.waitForUnique(events(DELIVERIES) * webhooks, 120_000)
    const burstMs = Date.now() - burstStarted
    log(`${webhooks} webhook(s): burst ${rate(burst.unique, burstMs)} deliveries/s`)

    const pacedEvents = events(PACED_DELIVERIES_PER_S * durationS)
    const eventsPerS = PACED_DELIVERIES_PER_S / webhooks
    receiver.send({ reset: true })
    const pacedStarted = Date.now()
    const pacedCpu = process.cpuUsage()
    for (let i = 0; i < pacedEvents; i++) {
      const wait = pacedStarted + (i * 1000) / eventsPerS - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      await emit(1)
    }
    const paced = await receiver.waitForUnique(pacedEvents * webhooks, 120_000)
    const pacedCpuUs = cpuSince(pacedCpu)
    const pacedLatency = percentiles(paced.latenciesMs)
    const pacedFromCommit = percentiles(paced.receipts.map(([seq, at]) => at - (committedAt.get(seq) ?? Number.NaN)).filter(Number.isFinite))
    log(`${webhooks} webhook(s): paced p50 ${pacedLatency.p50_ms} ms, p99 ${pacedLatency.p99_ms} ms`)

    const attempts = await db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
    return {
      badSignatures: backlog.badSignatures + burst.badSignatures + paced.badSignatures,
      report: {
        webhooks,
        backlog: {
          deliveries: backlog.unique,
          drain_ms: drainMs,
          deliveries_per_s: rate(backlog.unique, drainMs),
          duplicates: backlog.received - backlog.unique,
          service_cpu_us_per_delivery: perDelivery(drainCpuUs, backlog.unique),
          receiver_cpu_us_per_delivery: perDelivery(backlog.cpuUs, backlog.unique),
        },
        burst: {
          deliveries: burst.unique,
          producer_ms: producedMs,
          all_received_ms: burstMs,
          deliveries_per_s: rate(burst.unique, burstMs),
          duplicates: burst.received - burst.unique,
          event_to_receipt: percentiles(burst.latenciesMs),
        },
        paced: {
          deliveries: paced.unique,
          deliveries_per_s: PACED_DELIVERIES_PER_S,
          duplicates: paced.received - paced.unique,
          event_to_receipt: pacedLatency,
          commit_to_receipt: pacedFromCommit,
          service_and_producer_cpu_us_per_delivery: perDelivery(pacedCpuUs, paced.unique),
        },
        attempts_recorded: Number(attempts.n),
      },
    }
  } finally {
    await stopAll(services, storage, boss)
    fs.rmSync(dataDir, { recursive: true, force: true })
    if (databaseUrl) await dropServerDatabase(databaseUrl, adminUrl)
  }
}

/** `count` webhooks of one user through POST /v1/webhooks, each at its own path; their secrets by path. */
async function createWebhooks(services: Services, userId: number, url: string, count: number): Promise<Record<string, string>> {
  const app = await buildApp(services)
  try {
    const token = await services.tokens.issue(userId)
    const secrets: Record<string, string> = {}
    for (let i = 0; i < count; i++) {
      const created = await app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: `${url}/${i}`, events: ['backtest.*'], description: `bench receiver ${i}` }),
      })
      if (created.statusCode !== 200) throw new Error(`POST /v1/webhooks answered ${created.statusCode}: ${created.body}`)
      secrets[new URL(`${url}/${i}`).pathname] = created.json().secret as string
    }
    return secrets
  } finally {
    await app.close()
  }
}

/** `count` events in one transaction, each stamped with the producer's clock before the transaction. */
async function emitEvents(db: Db, userId: number, count: number, next: () => number, committedAt: Map<number, number>): Promise<void> {
  const sentMs = Date.now()
  const seqs: number[] = []
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < count; i++) {
      const seq = next()
      seqs.push(seq)
      await recordEvent(trx, { userId, type: 'backtest.job_done', data: { job_id: 'bt_bench', seq, sent_ms: sentMs }, at: new Date(sentMs) })
    }
  })
  const committed = Date.now()
  for (const seq of seqs) committedAt.set(seq, committed)
}

async function stopAll(services: Services, storage: Storage, boss: Awaited<ReturnType<typeof startQueue>>): Promise<void> {
  await services.webhooks.close()
  await services.sandbox.close()
  await boss.stop({ graceful: false, timeout: 2000 })
  await services.market.close()
  await storage.close()
}

/** 1, 5 and 15 minute load averages: figures on a shared host mean little without them. */
const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100)

/** This process's CPU time (user + system, all threads) since `start`, in µs. */
const cpuSince = (start: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(start)
  return user + system
}
const perDelivery = (cpuUs: number, deliveries: number) => Math.round(cpuUs / Math.max(1, deliveries))

const rate = (count: number, ms: number) => Math.round((count / ms) * 1000)

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null
  return { count: sorted.length, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: sorted[sorted.length - 1] ?? null }
}

interface ReceiverProcess {
  url: string
  caFile: string
  send(message: Record<string, unknown>): void
  /** Polls the receiver until it has seen `count` distinct deliveries; its tallies since the last reset. */
  waitForUnique(count: number, timeoutMs: number): Promise<ReceiverReport>
  stop(): void
}

async function startReceiver(): Promise<ReceiverProcess> {
  const child: ChildProcess = fork(path.join(REPO_ROOT, 'bench/support/webhook-receiver.ts'), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const waiting: Array<{ resolve: (message: unknown) => void; reject: (error: Error) => void }> = []
  child.on('message', (message) => waiting.shift()?.resolve(message))
  child.on('exit', (code) => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error(`the receiver exited with code ${code}`))
  })
  const next = <T>() => new Promise<T>((resolve, reject) => waiting.push({ resolve: resolve as (message: unknown) => void, reject }))
  const ready = await next<{ url: string; caFile: string }>()
  return {
    ...ready,
    send: (message) => child.send(message),
    async waitForUnique(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const reply = next<ReceiverReport>()
        child.send({ report: true })
        const report = await reply
        if (report.unique >= count) {
          const detailed = next<ReceiverReport>()
          child.send({ report: true, detail: true })
          return detailed
        }
        if (Date.now() > deadline) throw new Error(`the receiver saw ${report.unique} of ${count} deliveries in ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    stop: () => child.send({ stop: true }),
  }
}
