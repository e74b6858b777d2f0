import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { findOrCreateUserByEmail } from '../../src/auth/queries.js'
import type { Db } from '../../src/db/connect.js'
import { recordEvent } from '../../src/events/outbox.js'
import { newId } from '../../src/http/ids.js'
import { raiseProtectionAlarm } from '../../src/live/protection/alarm.js'
import { clientAlgoId } from '../../src/live/protection/client-algo-ids.js'
import { insertProtective, markProtective } from '../../src/live/protection/queries.js'
import { activeRun, endRun, insertRun } from '../../src/live/queries.js'
import { enterError } from '../../src/live/run-error.js'
import { trackDatabase } from '../../src/ops/database-gauges.js'
import { processRegistry, setDraining } from '../../src/ops/registry.js'
import { insertStrategy } from '../../src/strategies/queries.js'
import { dispatchRound, settle } from '../../src/webhooks/delivery-queries.js'
import { insertWebhook, updateWebhook } from '../../src/webhooks/queries.js'
import { type Backend, backends, openTestDatabase } from '../support/database.js'

const samplesOf = (text: string, family: string) => text.split('\n').filter((line) => line.startsWith(`${family} `) || line.startsWith(`${family}{`))

/** The scrape's clock: ages below are exact seconds before it. */
const NOW = Date.parse('2026-03-02T12:00:00Z')
const ago = (seconds: number) => new Date(NOW - seconds * 1000)
const quiet = pino({ level: 'silent' })

/** A fresh database whose gauges a scrape reads at NOW, for the length of `body`. */
async function withGauges(backend: Backend, body: (db: Db) => Promise<void>): Promise<void> {
  const database = await openTestDatabase(backend)
  const untrack = trackDatabase(database.handle, () => NOW, quiet)
  try {
    await body(database.handle.db as Db)
  } finally {
    untrack()
    await database.close()
  }
}

/** A deployed strategy (BTCUSDT, 1m) with its runs, one per mode given, in order: the last is active. */
async function deployedStrategy(db: Db, userId: number, modes: readonly ('live' | 'dry_run')[]): Promise<string> {
  const id = newId('strat')
  const base = { user_id: userId, template_id: 'sma_cross', params: { fast: 10, slow: 30, allow_short: false }, timeframe: '1m', capital: '500', leverage: 1 }
  await insertStrategy(db, { ...base, id, name: id, symbols: ['BTCUSDT'], exits: null, deployed_at: ago(3600), created_at: ago(7200), updated_at: ago(3600), deleted_at: null })
  await db.updateTable('strategies').set({ status: 'deployed' }).where('id', '=', id).execute()
  for (const [at, mode] of modes.entries()) {
    if (at > 0) await endRun(db, id, at, ago(3600 - at))
    await insertRun(db, { ...base, strategy_id: id, run: at + 1, template_version: null, seed: null, symbol: 'BTCUSDT', dry_run: mode === 'dry_run', exchange_key_id: null, started_at: ago(3600 - at) })
  }
  return id
}

describe('database gauges', () => {
  it('answer every scrape: a database that fails leaves its families without samples, logs why, and reads not ready', async () => {
    const database = await openTestDatabase('pglite')
    const lines: { level: number; msg: string }[] = []
    const log = pino({ level: 'info' }, { write: (chunk: string) => void lines.push(JSON.parse(chunk)) })
    const untrack = trackDatabase(database.handle, Date.now, log)
    try {
      const healthy = await processRegistry.metrics()
      assert.deepEqual(samplesOf(healthy, 'perpetua_ready'), ['perpetua_ready 1'])
      assert.deepEqual(samplesOf(healthy, 'perpetua_jobs_oldest_queued_seconds'), [
        'perpetua_jobs_oldest_queued_seconds{kind="backtest"} 0',
        'perpetua_jobs_oldest_queued_seconds{kind="sweep"} 0',
      ])
      assert.deepEqual(samplesOf(healthy, 'perpetua_runs_behind'), ['perpetua_runs_behind{mode="live"} 0', 'perpetua_runs_behind{mode="dry_run"} 0'])

      setDraining(true)
      const draining = await processRegistry.metrics()
      assert.deepEqual(samplesOf(draining, 'perpetua_ready'), ['perpetua_ready 0'])
      assert.deepEqual(samplesOf(draining, 'perpetua_draining'), ['perpetua_draining 1'])
      setDraining(false)

      await database.handle.close()
      const broken = await processRegistry.metrics()
      for (const family of ['perpetua_runs', 'perpetua_runs_behind', 'perpetua_jobs', 'perpetua_webhook_oldest_pending_seconds', 'perpetua_work_waiting']) {
        assert.deepEqual(samplesOf(broken, family), [], `${family} has no samples`)
        assert.match(broken, new RegExp(`^# TYPE ${family} gauge$`, 'm'))
      }
      assert.deepEqual(samplesOf(broken, 'perpetua_ready'), ['perpetua_ready 0'])
      assert.match(broken, /^process_cpu_user_seconds_total /m, 'the process families are still there')
      const errors = lines.filter((line) => line.level === 50).map((line) => line.msg)
      for (const what of ['runs', 'jobs', 'webhooks', 'readiness']) assert.ok(errors.some((msg) => msg.includes(`reading ${what} failed`)), `${what}: ${errors.join('; ')}`)
    } finally {
      untrack()
      setDraining(false)
      await database.close()
    }
  })

  for (const backend of backends()) {
    describe(backend, () => {
      it('perpetua_runs counts a strategy in error under its last run\'s mode, though entering error ended that run', async () => {
        await withGauges(backend, async (db) => {
          const userId = await findOrCreateUserByEmail(db, 'runs@example.test')
          await deployedStrategy(db, userId, ['dry_run'])
          // Dry first, then live: the error is the live run's.
          const failing = await deployedStrategy(db, userId, ['dry_run', 'live'])
          const earlier = await deployedStrategy(db, userId, ['live', 'dry_run'])
          for (const id of [failing, earlier]) {
            await db.transaction().execute(async (trx) => enterError(trx, (await activeRun(trx, id, true))!, { code: 'POSITION_UNEXPLAINED', message: 'the exchange holds 0.5 BTCUSDT we never ordered' }, ago(60)))
          }
          const ended = await db.selectFrom('strategy_runs').select('run').where('strategy_id', 'in', [failing, earlier]).where('ended_at', 'is', null).execute()
          assert.deepEqual(ended, [], 'entering error ends the run')

          const text = await processRegistry.metrics()
          assert.deepEqual(samplesOf(text, 'perpetua_runs').sort(), [
            'perpetua_runs{mode="dry_run",state="deployed"} 1',
            'perpetua_runs{mode="dry_run",state="error"} 1',
            'perpetua_runs{mode="live",state="error"} 1',
          ])
        })
      })

      it('perpetua_protective_orders_missing counts a deployed live run under a protection alarm until a protective order rests again after it, or its close at market went out', async () => {
        await withGauges(backend, async (db) => {
          const userId = await findOrCreateUserByEmail(db, 'protection@example.test')
          const id = await deployedStrategy(db, userId, ['live'])
          const missing = async () => samplesOf(await processRegistry.metrics(), 'perpetua_protective_orders_missing')
          let seq = 0
          const protective = async (status: 'open' | 'rejected' | 'finished', at: Date, type: 'STOP_MARKET' | 'MARKET' = 'STOP_MARKET') => {
            const clientAlgo = clientAlgoId(id, 'stop_loss', ++seq)
            await insertProtective(db, {
              client_algo_id: clientAlgo, strategy_id: id, run: 1, seq, symbol: 'BTCUSDT', kind: 'stop_loss', type, side: 'SELL',
              trigger_price: '58000', quantity: null, close_position: true, working_type: 'MARK_PRICE', activate_price: null, callback_rate: null,
              status: 'intent', algo_id: null, last_error: null, sent_at: at, created_at: at, updated_at: at,
            })
            await markProtective(db, clientAlgo, { status, algoId: status === 'open' ? 1000000033225453 + seq : undefined, lastError: status === 'rejected' ? 'Order would immediately trigger.' : undefined, now: at })
          }
          // A stop that rested before the alarm (the one the exchange then lost) does not answer it.
          await protective('open', ago(900))
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 0'])
          await raiseProtectionAlarm(db, { strategy_id: id, user_id: userId }, 'the stop loss of BTCUSDT is no longer on the exchange', ago(600))
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 1'])
          // Placing it again was refused: still missing.
          await protective('rejected', ago(500))
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 1'])
          await protective('open', ago(400))
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 0'], 'a stop resting again clears it')
          // A later alarm that ended with the position closed at market: nothing is left to protect.
          await raiseProtectionAlarm(db, { strategy_id: id, user_id: userId }, 'the stop loss of BTCUSDT could not rest: the position is closed at market', ago(300))
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 1'])
          await protective('finished', ago(200), 'MARKET')
          assert.deepEqual(await missing(), ['perpetua_protective_orders_missing 0'], 'the alarm\'s close at market clears it')
        })
      })

      it('perpetua_webhook_oldest_pending_seconds is the oldest due delivery of an active webhook: not a retry waiting its turn, nor a paused or broken webhook\'s', async () => {
        await withGauges(backend, async (db) => {
          const userId = await findOrCreateUserByEmail(db, 'webhooks@example.test')
          const webhook = async (name: string, status: 'active' | 'paused' | 'broken') => {
            const row = await insertWebhook(db, { id: newId('wh'), userId, url: `https://${name}.example.test/hook`, events: ['*'], description: null, balanceLowThreshold: null, secretEnc: 'sealed', at: ago(3600) })
            if (status !== 'active') await updateWebhook(db, row.id, { status }, ago(3600))
            return row.id
          }
          const active = await webhook('active', 'active')
          await webhook('paused', 'paused')
          await webhook('broken', 'broken')
          const oldest = async () => samplesOf(await processRegistry.metrics(), 'perpetua_webhook_oldest_pending_seconds')
          const event = (at: Date) => recordEvent(db, { userId, type: 'strategy.error', data: { strategy_id: 'strat_00000000', code: 'POSITION_UNEXPLAINED', message: 'x' }, at })

          /** Sends the round's one leased delivery, which fails (503): its retry is due at `retryAt`. */
          const failedAttempt = async (at: Date, retryAt: Date) => {
            const round = await dispatchRound(db, at, `lease-${at.getTime()}`, new Date(at.getTime() + 30_000), { events: 10, due: 10, full: [] })
            assert.equal(round.leased.length, 1)
            const sent = round.leased[0]!
            await settle(
              db,
              {
                attempts: [{ deliveryId: sent.id, webhookId: active, eventId: sent.event_id, eventType: sent.event_type, attempt: 1, at, delivered: false, status: 503, timeMs: 40, error: null }],
                settlements: [{ deliveryId: sent.id, lease: sent.lease, state: 'pending', attempts: 1, nextAttemptAt: retryAt, result: { status: 503, error: null } }],
                tallies: [{ webhookId: active, failures: 1, failuresAfterLastSuccess: null, lastAttemptAt: at, lastSuccessAt: null, gone: false }],
              },
              { pauseAfter: 20, breakAfter: 50 },
              at,
            )
          }

          // An event 10 minutes ago: the active webhook's delivery failed and its retry is due in a minute; the
          // paused and broken webhooks' deliveries are held since.
          await event(ago(600))
          await failedAttempt(ago(600), ago(-60))
          assert.equal((await db.selectFrom('deliveries').select('id').where('state', '=', 'pending').execute()).length, 3)
          assert.deepEqual(await oldest(), ['perpetua_webhook_oldest_pending_seconds 0'], 'nothing is due')

          // An event 5 minutes ago whose delivery failed too, its retry due 30 s ago: it has waited 30 s, not 300.
          await event(ago(300))
          await failedAttempt(ago(300), ago(30))
          assert.deepEqual(await oldest(), ['perpetua_webhook_oldest_pending_seconds 30'])

          // An event 2 minutes ago whose delivery to the active webhook waits for a round (the webhook had enough in flight).
          await event(ago(120))
          await dispatchRound(db, ago(120), 'lease-2', ago(90), { events: 10, due: 10, full: [active] })
          assert.deepEqual(await oldest(), ['perpetua_webhook_oldest_pending_seconds 120'])
        })
      })
    })
  }
})
