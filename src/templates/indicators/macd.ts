import { Ema } from './ema.js'

/**
 * MACD (Appel): line = EMA(fast) − EMA(slow) of closes, signal = EMA(signal) of the line, histogram =
 * line − signal. Each EMA is seeded with its simple average; the signal EMA starts with the first
 * defined line value, so the histogram is defined from close slow + signal − 1 on.
 */
export class Macd {
  private readonly fastEma: Ema
  private readonly slowEma: Ema
  private readonly signalEma: Ema
  line = Number.NaN
  signal = Number.NaN
  histogram = Number.NaN

  constructor(fast: number, slow: number, signal: number) {
    this.fastEma = new Ema(fast)
    this.slowEma = new Ema(slow)
    this.signalEma = new Ema(signal)
  }

  /** Adds a close; returns the histogram (NaN until defined). */
  push(close: number): number {
    const fast = this.fastEma.push(close)
    const slow = this.slowEma.push(close)
    if (slow !== slow) return Number.NaN
    this.line = fast - slow
    this.signal = this.signalEma.push(this.line)
    this.histogram = this.line - this.signal
    return this.histogram
  }
}
