import type { StreamMessage } from '../../api/types.js'
import { money, pct } from '../../format.js'

type Data = Record<string, unknown>

const text = (value: unknown): string => (value === null || value === undefined ? '—' : String(value))
const direction = (side: unknown): string => (side === 'buy' ? 'long' : side === 'sell' ? 'short' : text(side))

/**
 * One status-stream message in words ("Opened long 0.012 BTCUSDT at 64,210.5"); the raw JSON stays
 * one hover away (the entry's title). `price` writes a symbol's price to its tick.
 */
export function describeStreamMessage(message: StreamMessage, price: (symbol: string, value: unknown) => string): string {
  const d = (message.data ?? {}) as Data
  const symbol = text(d.symbol)
  switch (message.type) {
    case 'status': {
      const stats = (d.stats ?? {}) as Data
      const parts = [`Strategy ${text(d.status)}`]
      if (stats.total_pnl !== undefined) parts.push(`PnL ${money(stats.total_pnl as string)}`)
      if (stats.open_positions !== undefined) parts.push(`${text(stats.open_positions)} open`)
      if (stats.total_trades !== undefined) parts.push(`${text(stats.total_trades)} closed trades`)
      if (stats.win_rate !== undefined && stats.win_rate !== null) parts.push(`win rate ${pct(stats.win_rate as string, 1)}`)
      return parts.join(' · ')
    }
    case 'order': {
      const side = d.side === 'buy' ? 'Buy' : d.side === 'sell' ? 'Sell' : 'Order'
      const fee = d.fee === undefined || d.fee === null ? '' : `, fee ${money(d.fee as string, 4)}`
      return `${side} ${text(d.qty)} ${symbol} ${text(d.status)} at ${price(symbol, d.price)}${fee}`
    }
    case 'position_opened':
      return `Opened ${direction(d.side)} ${text(d.qty)} ${symbol} at ${price(symbol, d.entry_price)}`
    case 'position_closed': {
      const reason = d.exit_reason ? ` (${text(d.exit_reason)})` : ''
      const pnl = Number(d.pnl)
      return `Closed ${direction(d.side)} ${text(d.qty)} ${symbol} at ${price(symbol, d.exit_price)}, entry ${price(symbol, d.entry_price)}: PnL ${pnl > 0 ? '+' : ''}${money(d.pnl as string)}${reason}`
    }
    case 'error':
      return `Error ${text(d.code)}: ${text(d.message)}`
    default:
      return JSON.stringify(d)
  }
}
