import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import { feeRates, runBacktest } from '../../src/engine/index.js'
import { BTCUSDT_RULES, DAY, HOUR, dataFile, loadFunding, loadKlines } from './helpers.js'

/*
 * sma_cross 10/30 long-only on real BTCUSDT 1h futures klines and funding, 2022-01-01 00:00 to
 * 2024-12-31 23:00 UTC, recomputed here by a deliberately plain second implementation: prices parsed
 * from the CSV text into BigInt units of 1e−8 (no float averages at all), averages compared by
 * cross-multiplied BigInt window sums, funding events mapped to bars by division, one obvious loop.
 * The engine's trades, fees, funding, curve and final equity must agree with it.
 */
const START = Date.UTC(2022, 0, 1)
const END = Date.UTC(2024, 11, 31, 23)
const CAPITAL = 10_000
const FEE = 0.0005
const KLINES = 'BTCUSDT-1h-20190908-20260517.csv.gz'
const FUNDING = 'BTCUSDT-fundingRate-20190910-20260517.csv'

interface Row {
  time: number
  open: number
  close: number
  closeUnits: bigint
}

/** "47303.01" → 4730301000000n (units of 1e−8), straight from the text. */
function units(text: string): bigint {
  const [whole, fraction = ''] = text.split('.')
  return BigInt(whole!) * 100_000_000n + BigInt((fraction + '00000000').slice(0, 8))
}

function readRows(): Row[] {
  const text = zlib.gunzipSync(fs.readFileSync(dataFile(KLINES))).toString('utf8')
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
    .map(([time, open, , , close]) => ({ time: Number(time), open: Number(open), close: Number(close), closeUnits: units(close!) }))
    .filter((row) => row.time >= START && row.time <= END)
}

interface PlainTrade {
  entryTime: number
  entryPrice: number
  exitTime: number
  exitPrice: number
  qty: number
  fee: number
  funding: number
  pnl: number
}

function recompute() {
  const rows = readRows()
  for (let i = 1; i < rows.length; i++) assert.equal(rows[i]!.time - rows[i - 1]!.time, HOUR, 'the 2022–2024 hourly series has no gaps')
  // Signals: cross of SMA10 over SMA30 with the previous-nonzero rule, from BigInt prefix sums.
  const prefix = [0n]
  for (const row of rows) prefix.push(prefix[prefix.length - 1]! + row.closeUnits)
  const signalAt = new Map<number, 1 | 0>()
  let lastSign = 0n
  for (let i = 29; i < rows.length; i++) {
    const fast = prefix[i + 1]! - prefix[i + 1 - 10]!
    const slow = prefix[i + 1]! - prefix[i + 1 - 30]!
    const diff = fast * 30n - slow * 10n
    const sign = diff > 0n ? 1n : diff < 0n ? -1n : 0n
    if (sign === 0n) continue
    if (sign > 0n && lastSign < 0n) signalAt.set(i, 1)
    if (sign < 0n && lastSign > 0n) signalAt.set(i, 0)
    lastSign = sign
  }
  // Funding events, each at the bar whose hour holds it.
  const fundingAt = new Map<number, { rate: number; mark: number }[]>()
  const events = loadFunding(FUNDING)
  for (let k = 0; k < events.time.length; k++) {
    const bar = Math.floor((events.time[k]! - START) / HOUR)
    if (bar < 0 || bar >= rows.length) continue
    fundingAt.set(bar, [...(fundingAt.get(bar) ?? []), { rate: events.rate[k]!, mark: events.markPrice[k]! }])
  }
  const trades: PlainTrade[] = []
  const curve: [number, number][] = [[START, CAPITAL]]
  let cash = CAPITAL
  let qty = 0
  let open: PlainTrade | undefined
  let pending: 1 | 0 | undefined
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    if (row.time % DAY === 0 && i > 0) curve.push([row.time, cash + qty * (rows[i - 1]!.close - (open?.entryPrice ?? 0))])
    for (const event of fundingAt.get(i) ?? []) {
      if (qty === 0) continue
      const paid = qty * (Number.isNaN(event.mark) ? row.open : event.mark) * event.rate
      cash -= paid
      open!.funding += paid
    }
    if (pending === 1 && qty === 0) {
      const size = Math.floor((cash / (row.open * (1 + FEE))) * 1000 + 1e-9) / 1000
      if (size >= 0.001 && size * row.open >= 100) {
        const fee = size * row.open * FEE
        cash -= fee
        qty = size
        open = { entryTime: row.time, entryPrice: row.open, exitTime: 0, exitPrice: 0, qty: size, fee, funding: 0, pnl: 0 }
      }
    } else if (pending === 0 && qty > 0) {
      const fee = qty * row.open * FEE
      const gross = qty * (row.open - open!.entryPrice)
      cash += gross - fee
      open!.fee += fee
      trades.push({ ...open!, exitTime: row.time, exitPrice: row.open, pnl: gross - open!.fee - open!.funding })
      qty = 0
      open = undefined
    }
    pending = signalAt.get(i)
  }
  const last = rows[rows.length - 1]!
  const finalEquity = cash + qty * (last.close - (open?.entryPrice ?? 0))
  curve.push([last.time + HOUR, finalEquity])
  return { trades, finalEquity, open, curve, bars: rows.length }
}

describe('real data: BTCUSDT 1h sma_cross 10/30 long-only, 2022–2024, against an independent recomputation', () => {
  const bars = loadKlines('BTCUSDT', KLINES, HOUR)
  const funding = loadFunding(FUNDING)
  const result = runBacktest({
    templateId: 'sma_cross',
    params: { fast: 10, slow: 30 },
    bars: [bars],
    funding: [funding],
    rules: [BTCUSDT_RULES],
    capital: CAPITAL,
    leverage: 1,
    fees: feeRates('fixed_bps', 5),
    start: START,
    end: END,
  })
  const plain = recompute()
  const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b), CAPITAL), `${what}: ${a} ≠ ${b}`)

  it('uses the same bars and finds no gaps', () => {
    assert.equal(result.barsProcessed, plain.bars)
    assert.equal(plain.bars, 3 * 365 * 24 + 24, '2022–2024 has one leap day')
    assert.deepEqual(result.gaps, [])
  })

  it('makes the same trades: times, prices and quantities exactly; fees, funding and pnl to 1e−9', () => {
    assert.ok(plain.trades.length > 400, `${plain.trades.length} trades`)
    assert.equal(result.trades.length, plain.trades.length)
    result.trades.forEach((trade, k) => {
      const expected = plain.trades[k]!
      const what = `trade ${k + 1}`
      assert.equal(trade.id, k + 1)
      assert.equal(trade.side, 'buy')
      assert.equal(trade.entryTime, expected.entryTime, `${what} entry time`)
      assert.equal(trade.exitTime, expected.exitTime, `${what} exit time`)
      assert.equal(trade.entryPrice, expected.entryPrice, `${what} entry price`)
      assert.equal(trade.exitPrice, expected.exitPrice, `${what} exit price`)
      assert.equal(trade.qty, expected.qty, `${what} qty`)
      near(trade.fee, expected.fee, `${what} fee`)
      near(trade.funding, expected.funding, `${what} funding`)
      near(trade.pnl, expected.pnl, `${what} pnl`)
    })
  })

  it('ends with the same equity, open position and daily curve', () => {
    near(result.finalEquity, plain.finalEquity, 'final equity')
    assert.equal(result.openPositions.length, plain.open ? 1 : 0)
    assert.equal(result.equityCurve.length, plain.curve.length)
    result.equityCurve.forEach(([time, value], k) => {
      assert.equal(time, plain.curve[k]![0], `curve point ${k} time`)
      near(value, plain.curve[k]![1], `curve point ${k} value`)
    })
    near(result.feesPaid, plain.trades.reduce((sum, t) => sum + t.fee, 0) + (plain.open?.fee ?? 0), 'fees paid')
    near(result.fundingPaid, plain.trades.reduce((sum, t) => sum + t.funding, 0) + (plain.open?.funding ?? 0), 'funding paid')
  })

  it('reports metrics that follow from that curve and those trades', () => {
    const values = plain.curve.map(([, v]) => v)
    const returns = values.slice(1).map((v, k) => v / values[k]! - 1)
    const mean = returns.reduce((a, b) => a + b, 0) / returns.length
    const std = Math.sqrt(returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1))
    near(result.metrics.sharpe!, (mean / std) * Math.sqrt(365), 'sharpe')
    const downside = Math.sqrt(returns.reduce((a, r) => a + Math.min(r, 0) ** 2, 0) / returns.length)
    near(result.metrics.sortino!, (mean / downside) * Math.sqrt(365), 'sortino')
    const wins = plain.trades.filter((t) => t.pnl > 0)
    assert.equal(result.metrics.winRate, wins.length / plain.trades.length)
    assert.equal(result.metrics.totalTrades, plain.trades.length)
    const days = (plain.curve[plain.curve.length - 1]![0] - START) / DAY
    near(result.metrics.cagr!, (plain.finalEquity / CAPITAL) ** (365 / days) - 1, 'cagr')
  })
})
