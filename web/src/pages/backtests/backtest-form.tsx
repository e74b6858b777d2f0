import { useEffect, useRef, useState } from 'preact/hooks'
import { rememberSubmitted } from '../../api/backtest-watch.js'
import { api } from '../../api/endpoints.js'
import type { JobCreate } from '../../api/types.js'
import { ErrorBox, toError } from '../../components/async.js'
import { draftBody, StrategyFields, useStrategyDraft } from '../../components/strategy-fields.js'
import { FEE_MODELS } from '../../components/templates.js'
import { navigate } from '../../router.js'
import { CoverageHint } from './coverage.js'

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The end of the chosen day, or now when that is still to come (the API refuses an end in the future). */
function endOf(date: string): string {
  const end = new Date(`${date}T23:59:59Z`)
  return (end.getTime() > Date.now() ? new Date(Math.floor(Date.now() / 60_000) * 60_000) : end).toISOString()
}

/** A new backtest: the template's params form (from its JSON schema) and the job's fields; `templateId` picks the template it starts on. */
export function BacktestForm({ templateId }: { templateId?: string } = {}) {
  const state = useStrategyDraft({ timeframe: '1h', capital: '10000', ...(templateId ? { templateId } : {}) })
  const [start, setStart] = useState(dayOf(Date.now() - 180 * 86_400_000))
  const [end, setEnd] = useState(dayOf(Date.now()))
  const [feeModel, setFeeModel] = useState<string>('fixed_bps')
  const [feeBps, setFeeBps] = useState('5')
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const datesTouched = useRef(false)

  // History ends at the market's clock, not ours (the built-in replay exchange replays a past moment):
  // the form starts with the 180 days before it.
  useEffect(() => {
    api.marketTime().then(({ serverTime }) => {
      if (datesTouched.current) return
      setEnd(dayOf(serverTime - 86_400_000))
      setStart(dayOf(serverTime - 181 * 86_400_000))
    }, () => undefined)
  }, [])

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    const body: JobCreate = {
      ...draftBody(state.draft),
      start: `${start}T00:00:00Z`,
      end: endOf(end),
      fee_model: feeModel as JobCreate['fee_model'],
      ...(feeModel === 'fixed_bps' ? { fee_bps: feeBps.trim() } : {}),
    }
    try {
      const job = await api.createBacktest(body)
      rememberSubmitted(job)
      navigate(`/backtests/${job.id}`)
    } catch (failure) {
      setError(toError(failure))
      setBusy(false)
    }
  }

  return (
    <form class="card form-grid" onSubmit={submit} data-testid="backtest-form">
      <StrategyFields state={state} />
      <label>
        From (UTC)
        <input type="date" name="start" required value={start} onInput={(e) => ((datesTouched.current = true), setStart(e.currentTarget.value))} />
      </label>
      <label>
        To (UTC, inclusive)
        <input type="date" name="end" required value={end} onInput={(e) => ((datesTouched.current = true), setEnd(e.currentTarget.value))} />
      </label>
      <label>
        Fee model
        <select name="fee_model" value={feeModel} onChange={(e) => setFeeModel(e.currentTarget.value)}>
          {FEE_MODELS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      {feeModel === 'fixed_bps' ? (
        <label>
          Fee (bps per fill)
          <input name="fee_bps" inputMode="decimal" value={feeBps} onInput={(e) => setFeeBps(e.currentTarget.value)} />
        </label>
      ) : null}
      <div class="wide">
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy || !state.template} data-testid="backtest-submit">
          {busy ? 'Submitting…' : 'Run backtest'}
        </button>
        {/* Below the button: the hint arrives 0.4 s after an edit and must not move the button under a click. */}
        <CoverageHint
          symbols={draftBody(state.draft).symbols}
          timeframe={state.draft.timeframe}
          start={start}
          end={end}
          onFit={(range) => {
            datesTouched.current = true
            setStart(range.start)
            setEnd(range.end)
          }}
        />
      </div>
    </form>
  )
}
