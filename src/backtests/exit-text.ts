// Protective exits in words, for every client that shows them (the CLI's tables, the dashboard's pages),
// so a run's resolution or a strategy's exits read the same wherever they are shown.

/** An exits object as the API shows it (a strategy's, a job's config). */
export interface ExitsShown {
  stop_loss?: string
  take_profit?: string
  trailing_stop?: string
  trailing_activation?: string
  trigger?: string
}

const EXIT_LABELS: [keyof ExitsShown, string][] = [
  ['stop_loss', 'stop loss'],
  ['take_profit', 'take profit'],
  ['trailing_stop', 'trailing stop'],
  ['trailing_activation', 'trailing activation'],
  ['trigger', 'trigger'],
]

/** "stop loss 2%, take profit 4%, trigger last"; undefined for none. Fractions as percentages, as traders say them. */
export function exitsText(exits: ExitsShown | null | undefined): string | undefined {
  if (!exits) return undefined
  const parts = EXIT_LABELS.filter(([field]) => exits[field] !== undefined).map(([field, label]) => `${label} ${field === 'trigger' ? exits[field] : fractionText(exits[field]!)}`)
  return parts.length > 0 ? parts.join(', ') : undefined
}

/** "0.02" → "2%" (exact: the decimal point moves, no float rounding shows). */
export function fractionText(fraction: string): string {
  const value = Number(fraction) * 100
  return Number.isFinite(value) ? `${Number(value.toPrecision(12))}%` : fraction
}

/** "signal 10, stop_loss 3, take_profit 1": the reasons that closed trades, in the API's order. */
export function exitReasonsText(counts: Record<string, number> | undefined): string | undefined {
  if (!counts) return undefined
  const parts = Object.entries(counts).filter(([, count]) => count > 0)
  return parts.length > 0 ? parts.map(([reason, count]) => `${reason} ${count.toLocaleString('en-US')}`).join(', ') : 'no closed trades'
}

/** "BTCUSDT: 1m 724 bars, 5m 14,425": per symbol, the strategy bars examined at each resolution. */
export function resolutionText(resolution: Record<string, Record<string, number>> | undefined): string | undefined {
  if (!resolution) return undefined
  return Object.entries(resolution)
    .map(([symbol, counts]) => `${symbol}: ${Object.entries(counts).map(([label, count], i) => `${label} ${count.toLocaleString('en-US')}${i === 0 ? ' bars' : ''}`).join(', ') || 'no bars'}`)
    .join('; ')
}

/** "2 (BTCUSDT 2)": bars where a stop and a target were both inside the range (the stop side filled). */
export function ambiguousText(ambiguous: { total: number; by_symbol: Record<string, number> } | undefined): string | undefined {
  if (!ambiguous) return undefined
  const symbols = Object.entries(ambiguous.by_symbol).filter(([, count]) => count > 0)
  return `${ambiguous.total.toLocaleString('en-US')}${symbols.length > 0 ? ` (${symbols.map(([symbol, count]) => `${symbol} ${count.toLocaleString('en-US')}`).join(', ')})` : ''}`
}
