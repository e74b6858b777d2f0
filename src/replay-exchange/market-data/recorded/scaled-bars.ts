import { type Bars, firstAtOrAfter } from './bars.js'

/**
 * A donor's bars with prices and volumes scaled, from the bar containing the listing time on: the
 * stand-in series of an unrecorded symbol. A view, not a copy: 450 derived symbols cost no memory
 * until read.
 */
export class ScaledBars implements Bars {
  readonly interval: Bars['interval']
  readonly step: number
  readonly length: number
  private readonly offset: number

  constructor(
    private readonly base: Bars,
    private readonly priceScale: number,
    private readonly volumeScale: number,
    private readonly tick: number,
    listedAt: number,
  ) {
    this.interval = base.interval
    this.step = base.step
    this.offset = firstAtOrAfter(base, listedAt - base.step + 1)
    this.length = base.length - this.offset
  }

  private price(value: number): number {
    // On the symbol's tick grid, and never below one tick (early history of a scaled-down donor).
    return Math.max(this.tick, Math.round((value * this.priceScale) / this.tick) * this.tick)
  }
  time(i: number): number {
    return this.base.time(i + this.offset)
  }
  open(i: number): number {
    return this.price(this.base.open(i + this.offset))
  }
  high(i: number): number {
    return this.price(this.base.high(i + this.offset))
  }
  low(i: number): number {
    return this.price(this.base.low(i + this.offset))
  }
  close(i: number): number {
    return this.price(this.base.close(i + this.offset))
  }
  volume(i: number): number {
    return this.base.volume(i + this.offset) * this.volumeScale
  }
}
