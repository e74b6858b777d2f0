import { type Account, configOf, positionOf, round8, type Side } from '../accounts/account.js'

/**
 * Books one fill on the account's one-way position in `symbol` and returns the fill's realized PnL
 * (Binance's `realizedPnl`/`rp`: closed quantity × (fill price − entry price) × direction, before
 * the fee). Adding to a position moves the entry price to the quantity-weighted average; a fill past
 * zero closes the old position and opens the rest at the fill price. Isolated positions move
 * margin between the cross wallet and their own: qty × price / leverage in, a pro-rata share out.
 * The wallet (USDT) takes the realized PnL; the caller books the fee.
 */
export function applyFill(account: Account, symbol: string, side: Side, qty: number, price: number, time: number): number {
  const position = { ...positionOf(account, symbol) }
  const isolated = configOf(account, symbol).marginType === 'isolated'
  const direction = side === 'BUY' ? 1 : -1
  let remaining = qty
  let realized = 0
  if (position.amount !== 0 && Math.sign(position.amount) !== direction) {
    const held = Math.abs(position.amount)
    const closed = Math.min(held, remaining)
    realized = round8(closed * (price - position.entryPrice) * Math.sign(position.amount))
    if (isolated) position.isolatedWallet = round8(position.isolatedWallet - (position.isolatedWallet * closed) / held + realized)
    position.amount = roundQty(position.amount + direction * closed)
    position.accumulatedRealized = round8(position.accumulatedRealized + realized)
    remaining = roundQty(remaining - closed)
    if (position.amount === 0) {
      position.entryPrice = 0
      if (isolated) position.isolatedWallet = 0
    }
  }
  if (remaining > 0) {
    const held = Math.abs(position.amount)
    position.entryPrice = (held * position.entryPrice + remaining * price) / (held + remaining)
    position.amount = roundQty(position.amount + direction * remaining)
    if (isolated) position.isolatedWallet = round8(position.isolatedWallet + (remaining * price) / configOf(account, symbol).leverage)
  }
  position.updateTime = time
  if (position.amount === 0 && !isolated) position.accumulatedRealized = 0
  account.positions.set(symbol, position)
  account.balances.set('USDT', round8((account.balances.get('USDT') ?? 0) + realized))
  return realized
}

/** Quantities are sums of grid steps; rounding to 10 decimals removes float residue such as 0.30000000000000004. */
export function roundQty(value: number): number {
  return Math.round(value * 1e10) / 1e10
}
