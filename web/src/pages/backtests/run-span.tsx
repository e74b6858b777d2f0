import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { JobCreate } from '../../api/types.js'
import { FEE_MODELS } from '../../components/templates.js'
import { CoverageHint } from './coverage.js'

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The end of the chosen day, or now when that is still to come (the API refuses an end in the future). */
export function endOf(date: string): string {
  const end = new Date(`${date}T23:59:59Z`)
  return (end.getTime() > Date.now() ? new Date(Math.floor(Date.now() / 60_000) * 60_000) : end).toISOString()
}

/** A span and fee model to start from: a configuration being repeated (times exact, as the API wrote them). */
export type SpanInitial = Partial<Pick<JobCreate, 'start' | 'end' | 'fee_model' | 'fee_bps'>>

/**
 * What a backtest and a sweep ask besides the strategy: the days to run over and the fee model. The
 * span starts on the 180 days before the market's clock, or on `initial`'s times, which are sent
 * exactly as given while their days stay unedited, so repeating a configuration repeats its span to
 * the second.
 */
export function useRunSpan(initial: SpanInitial = {}) {
  const [start, setStart] = useState(initial.start ? initial.start.slice(0, 10) : dayOf(Date.now() - 180 * 86_400_000))
  const [end, setEnd] = useState(initial.end ? initial.end.slice(0, 10) : dayOf(Date.now()))
  const [feeModel, setFeeModel] = useState<string>(initial.fee_model ?? 'fixed_bps')
  const [feeBps, setFeeBps] = useState(initial.fee_bps ?? '5')
  const datesTouched = useRef(initial.start !== undefined)

  // History ends at the market's clock, not ours (the built-in replay exchange replays a past moment).
  useEffect(() => {
    api.marketTime().then(({ serverTime }) => {
      if (datesTouched.current) return
      setEnd(dayOf(serverTime - 86_400_000))
      setStart(dayOf(serverTime - 181 * 86_400_000))
    }, () => undefined)
  }, [])

  const setDays = (range: { start?: string; end?: string }) => {
    datesTouched.current = true
    if (range.start !== undefined) setStart(range.start)
    if (range.end !== undefined) setEnd(range.end)
  }
  /** The API's fields for the span and fees. */
  const body = (): Pick<JobCreate, 'start' | 'end' | 'fee_model' | 'fee_bps'> => ({
    start: initial.start && initial.start.slice(0, 10) === start ? initial.start : `${start}T00:00:00Z`,
    end: initial.end && initial.end.slice(0, 10) === end ? initial.end : endOf(end),
    fee_model: feeModel as JobCreate['fee_model'],
    ...(feeModel === 'fixed_bps' ? { fee_bps: feeBps.trim() } : {}),
  })
  return { start, end, feeModel, setFeeModel, feeBps, setFeeBps, setDays, body }
}

export type RunSpan = ReturnType<typeof useRunSpan>

/** The span's and fees' inputs, laid out in the caller's `.form-grid`. */
export function RunSpanFields({ span }: { span: RunSpan }) {
  return (
    <>
      <label>
        From (UTC)
        <input type="date" name="start" required value={span.start} onInput={(e) => span.setDays({ start: e.currentTarget.value })} />
      </label>
      <label>
        To (UTC, inclusive)
        <input type="date" name="end" required value={span.end} onInput={(e) => span.setDays({ end: e.currentTarget.value })} />
      </label>
      <label>
        Fee model
        <select name="fee_model" value={span.feeModel} onChange={(e) => span.setFeeModel(e.currentTarget.value)}>
          {FEE_MODELS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      {span.feeModel === 'fixed_bps' ? (
        <label>
          Fee (bps per fill)
          <input name="fee_bps" inputMode="decimal" value={span.feeBps} onInput={(e) => span.setFeeBps(e.currentTarget.value)} />
        </label>
      ) : null}
    </>
  )
}

/**
 * The history the chosen symbols hold for the span; offers to fit the span to it. Below the submit button: it
 * arrives 0.4 s after an edit and must not move the button under a click. `onRefused`: the symbol the API
 * refuses (the form disables its Run while the line says so), or undefined.
 */
export function RunSpanCoverage({ span, symbols, timeframe, onRefused }: { span: RunSpan; symbols: string[]; timeframe: string; onRefused?: (message: string | undefined) => void }) {
  return <CoverageHint symbols={symbols} timeframe={timeframe} start={span.start} end={span.end} onFit={(range) => span.setDays(range)} onRefused={onRefused} />
}
