import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { exitRulesOf } from '../../src/strategies/exits.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { poll } from '../support/poll.js'
import { minuteBacktest } from './backtest-parity.js'
import { account, LIVE_PARAMS, liveHarness, nothingPending } from './live-accounts.js'
import { assertLiveTrades } from './live-parity.js'

/**
 * The live parity test with protective exits (issue 31): a live run whose stop, target and trailing stop rest on
 * the replay exchange, which triggers them on its price path, makes the trades of a backtest of the same bars
 * with the same exits (judged on the same 1m bars), each exit of the same kind, at prices within a few basis
 * points. The worst exit price gap of each kind is printed (docs/decisions/live.md keeps the measured numbers).
 */
const MINUTE = 60_000
const REPLAY = { speed: 120, replayStart: Date.UTC(2025, 5, 2, 12, 30, 0) }
// Levels apart, so that no two kinds fire at one price: the stop 0.15 % against, trailing 0.15 % behind the best once
// 0.15 % in favour (so at or past the entry), the target 0.25 % in favour (reached only by a rise that never gives
// back 0.15 %). From 12:30 the backtest's trades close by trailing stop, target and stop within 75 minutes, before
// the first divergence on an unloaded host, so each kind gets its number.
const EXITS = { stop_loss: '0.0015', take_profit: '0.0025', trailing_stop: '0.0015', trailing_activation: '0.0015' }
const TRADER = account('EXITPARITY')

describe('a live run with protective exits against its backtest (pglite, replay exchange)', () => {
  let t: TestApp
  let pool: RunnerPool
  let user: SignedInUser
  const live = liveHarness(
    () => t,
    () => user,
  )

  before(async () => {
    t = await startTestApp('pglite', {}, { replay: { ...REPLAY, accounts: [{ ...TRADER, balances: { USDT: '10000' } }] } })
    user = await signIn(t)
    pool = new RunnerPool({ db: live.db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
    pool.start()
  })
  after(async () => {
    await pool?.stop()
    await t?.close()
  })

  it('exits where the backtest exits, each of the same kind, within a few basis points', async () => {
    const id = await live.create('exits parity', 'BTCUSDT', { exits: EXITS })
    await live.deploy(id, await live.registerKey('exits parity', TRADER))
    const kinds = ['stop_loss', 'take_profit', 'trailing_stop']
    const done = await poll(
      'the live run to close trades by its stop, its target and its trailing stop',
      90_000,
      async () => {
        const s = await live.runState(id)
        const reasons = new Set((await live.db().selectFrom('strategy_trades').select('exit_reason').where('strategy_id', '=', id).execute()).map((r) => r.exit_reason))
        return s && nothingPending(s) && s.broker.lastOpenTime && s.broker.lastOpenTime >= s.firstActive + 30 * MINUTE && kinds.every((k) => reasons.has(k)) ? s : undefined
      },
      250,
    )
    const stored = await live.db().selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
    const last = stored[stored.length - 1]!.exit_time.getTime()
    const { result: expected } = await minuteBacktest(t.services.market, { params: LIVE_PARAMS, capital: 1000, leverage: 2, start: done.warmupFrom, end: last, replay: { timeframe: '1m', exits: exitRulesOf(EXITS) } })
    // Trade for trade up to the first exit the two judge differently: at a bar's close the live order goes out a
    // few replay seconds after the backtest's fill, and a level crossed in those seconds (or two levels inside one
    // 1m bar, whose order the backtest cannot see) exits the live run first. From there the two diverge.
    const same = stored.findIndex((r, i) => r.exit_reason !== expected.trades[i]?.exitReason)
    const compared = same === -1 ? stored : stored.slice(0, same)
    // How soon the two diverge depends on the host's load (at 120× a second of delay is two replay minutes): what
    // must hold is that each trade up to there is priced alike, and (below) that the two share a protective exit.
    const { worstBps, worstLag, worstExitBps } = assertLiveTrades('BTCUSDT', compared, expected.trades, { maxBps: 30, maxQtyPct: 6 }) // one 0.001 step of ~0.018: equity moved by fills a few bps apart
    const counts = Object.fromEntries(kinds.map((k) => [k, compared.filter((r) => r.exit_reason === k).length]))
    // Past the divergence the two meet again at the next signal: each later protective exit of a trade the backtest
    // also made (same side, entered within the lag, closed by the same kind) is priced alike too. This is where a
    // kind that came only after the first divergence gets its number.
    const matched = kinds.map((k) => [k, [] as number[]] as const)
    for (const r of stored.filter((x) => kinds.includes(x.exit_reason))) {
      const twin = expected.trades.find((b) => b.side === r.side && b.exitReason === r.exit_reason && r.entry_time.getTime() - b.entryTime >= 0 && r.entry_time.getTime() - b.entryTime < 4 * MINUTE)
      if (twin) matched.find(([k]) => k === r.exit_reason)![1].push((Math.abs(Number(r.exit_price) - twin.exitPrice) / twin.exitPrice) * 10_000)
    }
    const worstMatched = Object.fromEntries(matched.filter(([, gaps]) => gaps.length > 0).map(([k, gaps]) => [k, { trades: gaps.length, worst_bps: Number(Math.max(...gaps).toFixed(2)) }]))
    for (const [k, { worst_bps }] of Object.entries(worstMatched)) assert.ok(worst_bps < 30, `${k}: every matched exit within 30 bps of the backtest's (worst ${worst_bps})`)
    assert.ok(compared.some((r) => kinds.includes(r.exit_reason)) || Object.keys(worstMatched).length > 0, `a protective exit the backtest made too, before the first divergence or matched after it (at trade ${same}): live ${JSON.stringify(stored.map((r) => [r.exit_reason, r.qty, r.entry_time.toISOString().slice(11, 16)]))}, backtest ${JSON.stringify(expected.trades.slice(0, stored.length + 1).map((b) => [b.exitReason, b.qty, new Date(b.entryTime).toISOString().slice(11, 16)]))}`)
    const diverged = same === -1 ? null : { trade: same, live: stored[same]!.exit_reason, backtest: expected.trades[same]?.exitReason ?? null }
    console.log(JSON.stringify({ exits_parity_trades: compared.length, of: stored.length, diverged, exits: counts, worst_price_deviation_bps: Number(worstBps.toFixed(2)), worst_exit_bps: Object.fromEntries(Object.entries(worstExitBps).map(([k, v]) => [k, Number(v.toFixed(2))])), worst_entry_lag_replay_ms: worstLag, matched_exits: worstMatched }))
  })
})
