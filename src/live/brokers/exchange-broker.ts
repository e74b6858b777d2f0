import type { Trade } from '../../engine/types.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { BrokerOutcome, ClosedBar, FundingEvent } from './broker.js'
import type { PaperBroker, PaperSetup } from './paper-broker.js'
import { type Execution, SymbolExchange, type SymbolLedger } from './symbol-exchange.js'

/**
 * The live broker of a one-symbol run: the run's own fill ledger and template are a PaperBroker's (the
 * engine's code), but the template's target becomes a signed MARKET order (SymbolExchange), sized by the
 * engine's formula from the run's own equity, and only the fill the exchange reports moves the ledger.
 */
export class ExchangeBroker extends SymbolExchange<BrokerOutcome> {
  readonly kind = 'exchange'

  constructor(
    readonly paper: PaperBroker,
    client: BinanceTradingClient,
    setup: PaperSetup,
  ) {
    super(paperLedger(paper), client, setup.symbol, setup.rules, setup.leverage)
  }

  get lastOpenTime(): number {
    return this.paper.lastOpenTime
  }

  get lastClose(): number {
    return this.paper.lastClose
  }

  warm(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): void {
    this.paper.warm(bars, funding)
  }

  /** Funding and the template's target at this close; the target is left for send(), never filled by the stepper. */
  onClosedBar(bar: ClosedBar, funding: readonly FundingEvent[]): BrokerOutcome {
    const outcome = this.paper.onClosedBar(bar, funding)
    this.paper.takeIntent()
    return outcome
  }

  snapshot(): Record<string, unknown> {
    return this.paper.snapshot()
  }

  totals(mark: number): { realized: number; unrealized: number; qty: number } {
    return this.paper.totals(mark)
  }

  /** The signed quantity the engine would hold after moving to `target` at `price` (PaperBroker.desiredQty). */
  desiredQty(target: number, price: number, time: number): number {
    return this.paper.desiredQty(target, price, time)
  }

  /** Sends the intent `clientOrderId` (already committed) moving the position to `target` of equity at about `price`. */
  send(clientOrderId: string, target: number, price: number, time: number): Promise<Execution<BrokerOutcome>> {
    // The target in force for the latch (the engine marks it at the fill; a live order is that fill).
    this.paper.guard?.filled(0, target)
    return this.sendQty(clientOrderId, this.desiredQty(target, price, time), price, time)
  }
}

/** A one-symbol run's PaperBroker as the exchange path books into it. */
function paperLedger(paper: PaperBroker): SymbolLedger<BrokerOutcome> {
  return {
    get qty() {
      return paper.ledger.qty[0]!
    },
    get lastClose() {
      return paper.lastClose
    },
    get lastOpenTime() {
      return paper.lastOpenTime
    },
    fillAt: (qty, price, time, intent) => paper.fillAt(qty, price, time, intent),
    exchangeClose: (size: number, price: number, time: number, reason: Trade['exitReason'], fee: number, clientOrderId: string) => paper.exchangeClose(size, price, time, reason, fee, clientOrderId),
  }
}
