import { EXIT_ARRAYS, ExitLevels } from './exit-levels.js'
import { liquidationPrice } from '../binance-formats/margin.js'
import { ceilToStep, floorToStep, roundTo, stepDecimals } from './steps.js'
import type { ExitReason, ExitRules, OpenPosition, SymbolRules, Trade } from './types.js'

/** The per-symbol arrays a snapshot carries. */
const LEDGER_ARRAYS = [
  'qty',
  'entryPrice',
  'margin',
  'liq',
  'tripEntryTime',
  'tripEntryQty',
  'tripEntryNotional',
  'tripExitQty',
  'tripExitNotional',
  'tripEntryFills',
  'tripEntryLast',
  'tripExitFills',
  'tripExitLast',
  'tripRealized',
  'tripFee',
  'tripFunding',
] as const

/** A fill as the ledger applies it: symbol index, side, size, price, fee. */
export type FillListener = (s: number, side: 'buy' | 'sell', size: number, price: number, fee: number) => void

/** A ledger's state without its trades (Ledger.snapshot). */
export interface LedgerState {
  cash: number
  feesPaid: number
  fundingPaid: number
  arrays: Record<string, number[]>
}

/**
 * The account of one backtest: cash (the wallet balance: capital + realized PnL − fees − funding) and
 * one isolated position per symbol. Every change of cash or position goes through here, so the
 * accounting identity holds at every step:
 *
 *   equity = cash + Σ qty × (mark − entryPrice),
 *
 * and a fill at price p changes equity marked at p by exactly −fee; a funding payment by exactly −payment.
 * The bar loop (simulate.ts) decides when; this class decides how much.
 */
export class Ledger {
  cash: number
  feesPaid = 0
  fundingPaid = 0
  readonly trades: Trade[] = []
  /** Told of every fill (a live runner records them); unset in backtests, where fills are only summed. */
  onFill: FillListener | undefined
  /**
   * Slippage of simulated market fills as a fraction (5 bps = 0.0005): a buy fills that much above the
   * price it is given, a sell below; liquidations fill at the liquidation price. 0 for runs that book an
   * exchange's own fills.
   */
  slippage = 0
  /** The protective levels of each position (protect()); undefined in runs without exits. */
  exits: ExitLevels | undefined
  /** Signed position quantity per symbol (> 0 long, < 0 short). */
  readonly qty: Float64Array
  /** Average entry price of the open quantity. */
  readonly entryPrice: Float64Array
  /** Isolated wallet balance of the position: entry notional / leverage, less funding paid since. */
  readonly margin: Float64Array
  /** Liquidation price; a long is liquidated when low ≤ liq (0 = unreachable), a short when high ≥ liq. */
  readonly liq: Float64Array

  // The open round trip per symbol, for its Trade record.
  // Public only for snapshot(); nothing outside the ledger writes them.
  readonly tripEntryTime: Float64Array
  readonly tripEntryQty: Float64Array
  readonly tripEntryNotional: Float64Array
  readonly tripExitQty: Float64Array
  readonly tripExitNotional: Float64Array
  /** Fills on each side of the trip and the price of the last one: a single fill reports its price exactly. */
  readonly tripEntryFills: Float64Array
  readonly tripEntryLast: Float64Array
  readonly tripExitFills: Float64Array
  readonly tripExitLast: Float64Array
  readonly tripRealized: Float64Array
  readonly tripFee: Float64Array
  readonly tripFunding: Float64Array
  private readonly stepDecimals: number[]
  private readonly tickDecimals: number[]
  /** Largest notional Binance lets a position reach at this leverage (the cap of the last tier allowing it). */
  private readonly maxNotional: number[]

  constructor(
    readonly symbols: readonly string[],
    readonly rules: readonly SymbolRules[],
    capital: number,
    readonly leverage: number,
    readonly takerRate: number,
  ) {
    const n = symbols.length
    this.cash = capital
    this.qty = new Float64Array(n)
    this.entryPrice = new Float64Array(n)
    this.margin = new Float64Array(n)
    this.liq = new Float64Array(n)
    this.tripEntryTime = new Float64Array(n)
    this.tripEntryQty = new Float64Array(n)
    this.tripEntryNotional = new Float64Array(n)
    this.tripExitQty = new Float64Array(n)
    this.tripExitNotional = new Float64Array(n)
    this.tripEntryFills = new Float64Array(n)
    this.tripEntryLast = new Float64Array(n)
    this.tripExitFills = new Float64Array(n)
    this.tripExitLast = new Float64Array(n)
    this.tripRealized = new Float64Array(n)
    this.tripFee = new Float64Array(n)
    this.tripFunding = new Float64Array(n)
    this.stepDecimals = rules.map((r) => stepDecimals(r.stepSize))
    this.tickDecimals = rules.map((r) => stepDecimals(r.tickSize))
    this.maxNotional = rules.map((r) => {
      let cap = 0
      for (const b of r.brackets) if ((b.initialLeverage ?? Infinity) >= leverage) cap = Math.max(cap, b.notionalCap)
      return cap
    })
  }

  /** Keeps protective levels for every position from now on, derived from `rules` where given. */
  protect(rules: ExitRules | undefined): ExitLevels {
    this.exits ??= new ExitLevels(this.rules, rules)
    return this.exits
  }

  /**
   * Everything but the trades list, as plain numbers (JSON keeps every float64 digit), for a runner to
   * save; with protective levels (protect()), theirs too.
   */
  snapshot(): LedgerState {
    const arrays: Record<string, number[]> = {}
    for (const key of LEDGER_ARRAYS) arrays[key] = plain(this[key])
    const exits = this.exits
    if (exits !== undefined) for (const key of EXIT_ARRAYS) arrays[key] = plain(exits[key])
    return { cash: this.cash, feesPaid: this.feesPaid, fundingPaid: this.fundingPaid, arrays }
  }

  /**
   * Puts a saved snapshot back (same symbols); trades recorded before it are not restored. Protective
   * levels come back when both the snapshot and this ledger have them (a snapshot from before exits
   * existed leaves them unset).
   */
  restore(state: LedgerState): void {
    this.cash = state.cash
    this.feesPaid = state.feesPaid
    this.fundingPaid = state.fundingPaid
    for (const key of LEDGER_ARRAYS) {
      const saved = state.arrays[key]
      if (!saved || saved.length !== this.symbols.length) throw new RangeError(`ledger snapshot lacks ${key} for ${this.symbols.length} symbols`)
      this[key].set(saved)
    }
    const exits = this.exits
    if (exits === undefined) return
    for (const key of EXIT_ARRAYS) {
      const saved = state.arrays[key]
      // JSON saved NaN (nothing set) as null.
      if (saved && saved.length === this.symbols.length) exits[key].set(saved.map((x) => (typeof x === 'number' ? x : Number.NaN)))
    }
  }

  /** The unrealized PnL of symbol s's position at `price`; equity is cash plus this over every symbol. */
  unrealized(s: number, price: number): number {
    const q = this.qty[s]!
    return q === 0 ? 0 : q * (price - this.entryPrice[s]!)
  }

  /**
   * The signed quantity that puts `fraction` of `equity` to work at `price`:
   * floor to stepSize of equity × leverage × |fraction| / (price × (1 + taker rate)), capped by the
   * leverage tiers' largest notional.
   */
  targetQty(s: number, fraction: number, equity: number, price: number): number {
    if (fraction === 0 || !(equity > 0)) return 0
    const rules = this.rules[s]!
    let notional = (equity * this.leverage * Math.abs(fraction)) / (1 + this.takerRate)
    if (notional > this.maxNotional[s]!) notional = this.maxNotional[s]!
    const qty = floorToStep(notional / price, rules.stepSize, this.stepDecimals[s]!)
    return fraction < 0 ? -qty : qty
  }

  /** Settles one funding event on symbol s: cash −= qty × mark × rate, charged to the position's margin. */
  settleFunding(s: number, rate: number, mark: number): void {
    const q = this.qty[s]!
    if (q === 0) return
    const payment = q * mark * rate
    this.cash -= payment
    this.fundingPaid += payment
    this.tripFunding[s]! += payment
    this.margin[s]! -= payment
    this.updateLiquidationPrice(s)
  }

  /**
   * Moves a one-symbol account to `fraction` of its equity at `price`. A close or reversal closes the
   * position first, so a new leg is sized on the cash that leaves (the wallet balance, after funding);
   * a resize in the same direction counts the position's unrealized PnL at `price` as equity too.
   */
  applyTarget(s: number, fraction: number, price: number, time: number): void {
    const current = this.qty[s]!
    if (current !== 0 && (fraction === 0 || fraction > 0 !== current > 0)) this.close(s, this.fillPrice(price, -current), time, 'signal')
    const equity = this.cash + this.unrealized(s, price)
    this.moveTo(s, this.targetQty(s, fraction, equity, price), price, time)
  }

  /**
   * Moves symbol s to the signed quantity `target` with a market order at `price`: closes, reverses,
   * opens, adds or reduces. Opening and resizing legs below minQty or minNotional are skipped (the
   * exchange would reject them); closing a whole position is always allowed, as a reduce-only order is.
   * Each leg fills at `price` worsened by the slippage of its side; sizes and filters use `price`.
   */
  moveTo(s: number, target: number, price: number, time: number): void {
    const current = this.qty[s]!
    if (target === current) return
    if (current !== 0 && (target === 0 || target > 0 !== current > 0)) {
      this.close(s, this.fillPrice(price, -current), time, 'signal')
      if (target !== 0 && this.tradable(s, Math.abs(target), price)) this.open(s, target, this.fillPrice(price, target), time)
    } else if (current === 0) {
      if (this.tradable(s, Math.abs(target), price)) this.open(s, target, this.fillPrice(price, target), time)
    } else {
      const delta = Math.abs(target) - Math.abs(current)
      const size = roundTo(Math.abs(delta), this.stepDecimals[s]!)
      if (!this.tradable(s, size, price)) return
      if (delta > 0) this.add(s, size, this.fillPrice(price, current))
      else this.reduce(s, size, this.fillPrice(price, -current))
    }
  }

  /** Closes symbol s's position at its liquidation price, as a trade with exitReason liquidation. */
  liquidate(s: number, time: number): void {
    this.close(s, this.liq[s]!, time, 'liquidation')
  }

  /** Closes symbol s's whole position by a protective exit: a market order triggered at `price`, worse by the slippage. */
  exit(s: number, price: number, time: number, reason: ExitReason): void {
    this.close(s, this.fillPrice(price, -this.qty[s]!), time, reason)
  }

  /**
   * The exchange closed `size` of symbol s's position itself (a live run's liquidation or ADL) at `price`,
   * charging `fee`: booked as it reported it; the trade closes with `reason` once the position is flat.
   */
  exchangeClose(s: number, size: number, price: number, time: number, reason: Trade['exitReason'], fee: number): void {
    const held = Math.abs(this.qty[s]!)
    if (held === 0 || !(size > 0)) return
    if (size >= held) this.close(s, price, time, reason, fee)
    else this.reduce(s, roundTo(size, this.stepDecimals[s]!), price, fee)
  }

  /** Positions still open, marked at `marks[s]`. */
  openPositions(marks: ArrayLike<number>): OpenPosition[] {
    const open: OpenPosition[] = []
    for (let s = 0; s < this.symbols.length; s++) {
      const q = this.qty[s]!
      if (q === 0) continue
      const mark = marks[s]!
      open.push({
        symbol: this.symbols[s]!,
        side: q > 0 ? 'buy' : 'sell',
        entryTime: this.tripEntryTime[s]!,
        entryPrice: this.entryPrice[s]!,
        qty: Math.abs(q),
        markPrice: mark,
        unrealizedPnl: q * (mark - this.entryPrice[s]!),
        realizedPnl: this.tripRealized[s]!,
        fee: this.tripFee[s]!,
        funding: this.tripFunding[s]!,
        liquidationPrice: this.liq[s]! > 0 ? this.liq[s]! : null,
      })
    }
    return open
  }

  /** `price` worsened by the slippage for an order of side sign(side): higher for a buy, lower for a sell. */
  private fillPrice(price: number, side: number): number {
    const slip = this.slippage
    if (slip === 0) return price
    return side > 0 ? price * (1 + slip) : price * (1 - slip)
  }

  private tradable(s: number, size: number, price: number): boolean {
    const rules = this.rules[s]!
    return size > 0 && size >= rules.minQty && size * price >= rules.minNotional
  }

  private charge(s: number, size: number, price: number, side: number, fee = size * price * this.takerRate): number {
    this.cash -= fee
    this.feesPaid += fee
    this.tripFee[s]! += fee
    if (this.onFill !== undefined) this.onFill(s, side > 0 ? 'buy' : 'sell', size, price, fee)
    return fee
  }

  private open(s: number, target: number, price: number, time: number): void {
    const size = Math.abs(target)
    this.tripEntryTime[s] = time
    this.tripEntryQty[s] = 0
    this.tripEntryNotional[s] = 0
    this.tripExitQty[s] = 0
    this.tripExitNotional[s] = 0
    this.tripEntryFills[s] = 0
    this.tripExitFills[s] = 0
    this.tripRealized[s] = 0
    this.tripFee[s] = 0
    this.tripFunding[s] = 0
    this.qty[s] = 0
    this.margin[s] = 0
    this.add(s, size, price, target > 0 ? 1 : -1)
  }

  private add(s: number, size: number, price: number, side: number = Math.sign(this.qty[s]!)): void {
    this.charge(s, size, price, side)
    const held = Math.abs(this.qty[s]!)
    this.entryPrice[s] = held === 0 ? price : (held * this.entryPrice[s]! + size * price) / (held + size)
    this.qty[s] = side * roundTo(held + size, this.stepDecimals[s]!)
    this.margin[s]! += (size * price) / this.leverage
    this.tripEntryQty[s]! += size
    this.tripEntryNotional[s]! += size * price
    this.tripEntryFills[s]!++
    this.tripEntryLast[s] = price
    this.updateLiquidationPrice(s)
    if (this.exits !== undefined) this.exits.entered(s, side, this.entryPrice[s]!, held === 0)
  }

  private reduce(s: number, size: number, price: number, fee?: number): void {
    const q = this.qty[s]!
    const held = Math.abs(q)
    const realized = Math.sign(q) * size * (price - this.entryPrice[s]!)
    this.cash += realized
    this.tripRealized[s]! += realized
    this.charge(s, size, price, -q, fee)
    this.margin[s]! *= (held - size) / held
    this.qty[s] = Math.sign(q) * roundTo(held - size, this.stepDecimals[s]!)
    this.recordExit(s, size, price)
    this.updateLiquidationPrice(s)
  }

  private close(s: number, price: number, time: number, reason: ExitReason, exchangeFee?: number): void {
    const q = this.qty[s]!
    const size = Math.abs(q)
    const realized = Math.sign(q) * size * (price - this.entryPrice[s]!)
    this.cash += realized
    this.tripRealized[s]! += realized
    this.charge(s, size, price, -q, exchangeFee)
    this.recordExit(s, size, price)
    const fee = this.tripFee[s]!
    const funding = this.tripFunding[s]!
    this.trades.push({
      id: this.trades.length + 1,
      symbol: this.symbols[s]!,
      side: q > 0 ? 'buy' : 'sell',
      entryTime: this.tripEntryTime[s]!,
      entryPrice: this.tripEntryFills[s] === 1 ? this.tripEntryLast[s]! : this.tripEntryNotional[s]! / this.tripEntryQty[s]!,
      exitTime: time,
      exitPrice: this.tripExitFills[s] === 1 ? this.tripExitLast[s]! : this.tripExitNotional[s]! / this.tripExitQty[s]!,
      qty: roundTo(this.tripEntryQty[s]!, this.stepDecimals[s]!),
      fee,
      funding,
      pnl: this.tripRealized[s]! - fee - funding,
      exitReason: reason,
    })
    this.qty[s] = 0
    this.entryPrice[s] = 0
    this.margin[s] = 0
    this.liq[s] = 0
    if (this.exits !== undefined) this.exits.flat(s)
  }

  private recordExit(s: number, size: number, price: number): void {
    this.tripExitQty[s]! += size
    this.tripExitNotional[s]! += size * price
    this.tripExitFills[s]!++
    this.tripExitLast[s] = price
  }

  /** Rounded to the tick on the trader's unfavourable side, so the trigger is never later than the exact price. */
  private updateLiquidationPrice(s: number): void {
    const q = this.qty[s]!
    if (q === 0) {
      this.liq[s] = 0
      return
    }
    const rules = this.rules[s]!
    const exact = liquidationPrice(q > 0 ? 1 : -1, Math.abs(q), this.entryPrice[s]!, this.margin[s]!, rules.brackets)
    if (exact <= 0) {
      this.liq[s] = 0
      return
    }
    const decimals = this.tickDecimals[s]!
    this.liq[s] = q > 0 ? ceilToStep(exact, rules.tickSize, decimals) : floorToStep(exact, rules.tickSize, decimals)
  }
}

// A plain loop: Array.from walks a typed array through its iterator, which made this a runner's
// costliest step per bar (bench/live.ts profile: 3.6% of the main thread at 1,000 strategies).
function plain(source: Float64Array): number[] {
  const copy = new Array<number>(source.length)
  for (let i = 0; i < source.length; i++) copy[i] = source[i]!
  return copy
}
