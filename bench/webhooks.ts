import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { buildApp } from '../src/app.js'
import { issueApiKey } from '../src/auth/api-keys.js'
import { loadConfig } from '../src/config.js'
import { startQueue } from '../src/db/queue.js'
import { recordEvent } from '../src/events/outbox.js'
import { createServices } from '../src/services.js'
import { openStorage } from '../src/storage.js'
import { log } from './support/log.js'
import { REPO_ROOT } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** The goals from issue 5. */
const GOAL_PER_S = 1_000
const GOAL_P99_MS = 100
/** The burst: events committed as fast as the producer can, in transactions of this many. */
const BURST_EVENTS = 10_000
const BURST_BATCH = 100
/** The paced run: one event per transaction at this rate, for --duration seconds. */
const PACED_PER_S = 500
const WARMUP_EVENTS = 500

interface ReceiverReport {
  received: number
  unique: number
  badSignatures: number
  latenciesMs: number[]
}

/**
 * Webhook deliveries through the whole pipeline, as `perpetua serve` runs it on the embedded
 * database: events written to the outbox in their own transactions, fanned out, queued (pg-boss),
 * signed, sent over HTTPS with certificate checks to a receiver in another process, and every attempt
 * recorded. The receiver verifies every signature and measures event → receipt.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  const receiver = await startReceiver()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-webhooks-'))
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    UPSTREAM_URL: 'http://127.0.0.1:9', // no market data is used
  })
  const logger = pino({ level: 'warn' }, process.stderr)
  const storage = await openStorage(config, 'bench')
  const boss = await startQueue(storage.database, (error) => log(`queue error: ${String(error)}`))
  const services = createServices(config, storage.database, Date.now, boss)
  await services.webhooks.start({ database: storage.database, boss, log: logger })
  const app = await buildApp(services)
  const failures: string[] = []
  try {
    const db = storage.database.db
    await issueApiKey(db, services.secrets, { email: 'bench-webhooks@perpetua.test', scopes: ['webhooks:write'] })
    const user = await db.selectFrom('users').select('id').where('email', '=', 'bench-webhooks@perpetua.test').executeTakeFirstOrThrow()
    const token = await services.tokens.issue(user.id)
    const created = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: receiver.url, events: ['backtest.*'], description: 'bench receiver' }),
    })
    if (created.statusCode !== 200) throw new Error(`POST /v1/webhooks answered ${created.statusCode}: ${created.body}`)
    receiver.send({ secret: created.json().secret as string })

    let sequence = 0
    const emit = async (count: number) => {
      const sentMs = Date.now()
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < count; i++) {
          await recordEvent(trx, { userId: user.id, type: 'backtest.job_done', data: { job_id: `bt_bench`, seq: ++sequence, sent_ms: sentMs }, at: new Date(sentMs) })
        }
      })
    }

    log(`warm-up: ${WARMUP_EVENTS} events`)
    for (let i = 0; i < WARMUP_EVENTS; i += BURST_BATCH) await emit(BURST_BATCH)
    await receiver.waitForUnique(WARMUP_EVENTS, 60_000)

    log(`backlog: ${BURST_EVENTS} events committed while the pipeline is stopped, then drained`)
    await services.webhooks.stop()
    receiver.send({ reset: true })
    for (let i = 0; i < BURST_EVENTS; i += BURST_BATCH) await emit(BURST_BATCH)
    const drainStarted = Date.now()
    await services.webhooks.start({ database: storage.database, boss, log: logger })
    const backlog = await receiver.waitForUnique(BURST_EVENTS, 120_000)
    const drainMs = Date.now() - drainStarted
    const perSecond = Math.round((BURST_EVENTS / drainMs) * 1000)
    log(`backlog: ${perSecond} deliveries/s`)

    log(`burst: ${BURST_EVENTS} events in transactions of ${BURST_BATCH}, delivered while they are written`)
    receiver.send({ reset: true })
    const burstStarted = Date.now()
    for (let i = 0; i < BURST_EVENTS; i += BURST_BATCH) await emit(BURST_BATCH)
    const produced = Date.now() - burstStarted
    const burst = await receiver.waitForUnique(BURST_EVENTS, 120_000)
    const burstMs = Date.now() - burstStarted
    const burstPerSecond = Math.round((BURST_EVENTS / burstMs) * 1000)
    log(`burst: ${burstPerSecond} deliveries/s end to end (producer done after ${produced} ms)`)

    const pacedEvents = PACED_PER_S * options.durationS
    log(`paced: ${PACED_PER_S} events/s for ${options.durationS} s, one event per transaction`)
    receiver.send({ reset: true })
    const pacedStarted = Date.now()
    for (let i = 0; i < pacedEvents; i++) {
      const due = pacedStarted + (i * 1000) / PACED_PER_S
      const wait = due - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      await emit(1)
    }
    const paced = await receiver.waitForUnique(pacedEvents, 120_000)
    const pacedLatency = percentiles(paced.latenciesMs)
    log(`paced: p50 ${pacedLatency.p50_ms} ms, p99 ${pacedLatency.p99_ms} ms`)

    const badSignatures = backlog.badSignatures + burst.badSignatures + paced.badSignatures
    if (badSignatures > 0) failures.push(`${badSignatures} deliveries failed the receiver's signature check`)
    const attempts = await db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
    const report = {
      suite: 'webhooks',
      setup: {
        database: 'embedded PGlite (the npm start default)',
        receiver: 'HTTPS on 127.0.0.1 in another process; certificate from a test CA, verified; every signature checked',
        event: 'backtest.job_done written with recordEvent inside its own transaction, subscribed through backtest.*',
      },
      backlog: {
        about: 'the pipeline alone: events already committed, from starting the dispatcher to the last receipt',
        events: BURST_EVENTS,
        drain_ms: drainMs,
        deliveries_per_s: perSecond,
        duplicates: backlog.received - backlog.unique,
      },
      burst: {
        about: 'end to end: events written in transactions while the pipeline delivers them (one database session)',
        events: BURST_EVENTS,
        events_per_transaction: BURST_BATCH,
        producer_ms: produced,
        all_received_ms: burstMs,
        deliveries_per_s: burstPerSecond,
        duplicates: burst.received - burst.unique,
        event_to_receipt: percentiles(burst.latenciesMs),
      },
      paced: {
        events: pacedEvents,
        rate_per_s: PACED_PER_S,
        events_per_transaction: 1,
        duplicates: paced.received - paced.unique,
        event_to_receipt: pacedLatency,
      },
      attempts_recorded: Number(attempts.n),
      goal: {
        deliveries_per_s_at_least: GOAL_PER_S,
        measured_by: 'backlog.deliveries_per_s and paced.event_to_receipt.p99_ms',
        p99_ms_under: GOAL_P99_MS,
        met: perSecond >= GOAL_PER_S && pacedLatency.p99_ms !== null && pacedLatency.p99_ms < GOAL_P99_MS,
      },
      node: process.version,
    }
    return { report, failures }
  } finally {
    await app.close()
    await services.webhooks.close()
    await boss.stop({ graceful: false, timeout: 2000 })
    await services.market.close()
    await storage.close()
    receiver.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null
  return { count: sorted.length, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: sorted[sorted.length - 1] ?? null }
}

interface ReceiverProcess {
  url: string
  caFile: string
  send(message: Record<string, unknown>): void
  /** Polls the receiver until it has seen `count` distinct events; its tallies since the last reset. */
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
        if (report.unique >= count) return report
        if (Date.now() > deadline) throw new Error(`the receiver saw ${report.unique} of ${count} events in ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    stop: () => {
      child.send({ stop: true })
    },
  }
}
