/**
 * Binance sends decimals as strings with a fixed number of places per symbol (BTCUSDT prices with
 * 2, quantities with 3). A recorded value that needs more places than the symbol's current
 * precision (older tick sizes) keeps them, up to 8, rather than being rounded away.
 */
export function decimal(value: number, places: number): string {
  let text = value.toFixed(places)
  for (let p = places + 1; p <= 8 && Math.abs(Number(text) - value) > Math.abs(value) * 1e-12; p++) text = value.toFixed(p)
  return text === `-${(0).toFixed(places)}` ? text.slice(1) : text
}
