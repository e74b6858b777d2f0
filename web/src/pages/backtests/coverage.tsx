import { useEffect, useState } from 'preact/hooks'
import { PerpetuaError } from '../../../../src/client/index.js'
import { client } from '../../api/session.js'
import type { Coverage } from '../../api/types.js'
import { toError } from '../../components/async.js'
import { moveInside } from './coverage-range.js'

type Timeframe = Coverage['timeframe']

const DEBOUNCE_MS = 400

/** Reads the coverage of each symbol (after the typing settles); `error` is the API's answer to the first refused one. */
export function useCoverage(symbols: string[], timeframe: string): { coverage: Coverage[] | undefined; error: Error | undefined } {
  const [state, setState] = useState<{ coverage: Coverage[] | undefined; error: Error | undefined }>({ coverage: undefined, error: undefined })
  const key = `${symbols.join(',')}|${timeframe}`
  useEffect(() => {
    if (symbols.length === 0) return setState({ coverage: undefined, error: undefined })
    let live = true
    const timer = setTimeout(() => {
      Promise.all(symbols.map((symbol) => readCoverage(symbol, timeframe))).then(
        (coverage) => live && setState({ coverage, error: undefined }),
        (error: unknown) => live && setState({ coverage: undefined, error: toError(error) }),
      )
    }, DEBOUNCE_MS)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [key])
  return state
}

function readCoverage(symbol: string, timeframe: string): Promise<Coverage> {
  return client().get('/v1/backtest/coverage', { query: { symbol, timeframe: timeframe as Timeframe } })
}

const day = (iso: string) => iso.slice(0, 10)

/** The dates of `wanted` that every symbol has bars for, or null when they share none. */
export function commonRange(coverage: Coverage[]): { start: string; end: string } | null {
  let start = ''
  let end = '9999'
  for (const c of coverage) {
    if (!c.start || !c.end) return null
    if (day(c.start) > start) start = day(c.start)
    if (day(c.end) < end) end = day(c.end)
  }
  return start && start <= end ? { start, end } : null
}

/**
 * What the chosen symbols and timeframe have recorded, under the backtest form's dates, with what the
 * chosen dates miss: a range outside the data fails with NO_DATA, a range that overhangs it runs on
 * part of it (the result then carries warnings). `onFit` moves the dates inside the recorded range.
 */
export function CoverageHint({
  symbols,
  timeframe,
  start,
  end,
  onFit,
  onRefused,
}: {
  symbols: string[]
  timeframe: string
  start: string
  end: string
  onFit: (range: { start: string; end: string }) => void
  /** Told the API's refusal of a symbol (an unlisted one, with its suggestion), then undefined once none is refused. */
  onRefused?: ((message: string | undefined) => void) | undefined
}) {
  const { coverage, error } = useCoverage(symbols, timeframe)
  // A 400 is the symbol itself (the exchange lists no BTCUSTD): the submission would be refused with the same words.
  const refused = error instanceof PerpetuaError && error.status === 400 ? error.message : undefined
  useEffect(() => onRefused?.(refused), [refused])
  // A server without the endpoint (older than issue 24) answers 404: the form then says nothing.
  if (error instanceof PerpetuaError && error.status === 404) return null
  if (refused) {
    return (
      <p class="error" role="alert" data-testid="coverage" data-state="refused">
        {refused}
      </p>
    )
  }
  if (error) return <p class="hint" data-testid="coverage" data-state="unknown">Recorded history unknown: {error.message}</p>
  if (!coverage) return null
  const common = commonRange(coverage)
  const outside = common ? end < common.start || start > common.end : true
  const overhang = common && !outside && (start < common.start || end > common.end)
  // Outside: as many days as were chosen, at the recorded edge nearer them; overhanging: the chosen dates cut to it.
  const fit = !common ? null : outside ? moveInside(common, start, end) : overhang ? { start: start < common.start ? common.start : start, end: end > common.end ? common.end : end } : null
  return (
    <div class="hint" data-testid="coverage" data-state={outside ? 'outside' : overhang ? 'partial' : 'inside'} data-start={common?.start ?? ''} data-end={common?.end ?? ''}>
      Recorded {timeframe} history:{' '}
      {coverage.map((c, i) => (
        <span key={c.symbol}>
          {i > 0 ? ' · ' : ''}
          {c.symbol} {c.start && c.end ? `${day(c.start)} → ${day(c.end)}` : 'none'}
        </span>
      ))}
      {outside ? (
        <p class="error" role="alert">
          {common ? `The chosen dates hold none of it: the backtest would fail with NO_DATA.` : `No range has bars for every symbol: the backtest would fail with NO_DATA.`}
        </p>
      ) : overhang ? (
        <p class="warn">The chosen dates reach beyond it: the run covers part of them and its result will say so.</p>
      ) : null}
      {fit ? (
        <button type="button" class="link" onClick={() => onFit(fit)} data-testid="fit-dates">
          Use {fit.start} → {fit.end}
        </button>
      ) : null}
    </div>
  )
}
