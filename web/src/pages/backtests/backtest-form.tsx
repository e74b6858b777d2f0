import { useState } from 'preact/hooks'
import { rememberSubmitted } from '../../api/backtest-watch.js'
import { api } from '../../api/endpoints.js'
import type { JobCreate } from '../../api/types.js'
import { ErrorBox, toError } from '../../components/async.js'
import { exitFieldError, exitsDraftOf, FieldError } from '../../components/exit-fields.js'
import { draftBody, StrategyFields, useStrategyDraft } from '../../components/strategy-fields.js'
import { navigate } from '../../router.js'
import { RunSpanCoverage, RunSpanFields, useRunSpan } from './run-span.js'

/**
 * A new backtest: the template's params form (from its JSON schema) and the job's fields. `templateId`
 * picks the template it starts on; `initial`, a configuration to repeat (a sweep's run), fills every field.
 */
export function BacktestForm({ templateId, initial }: { templateId?: string; initial?: Partial<JobCreate> } = {}) {
  const state = useStrategyDraft({
    timeframe: initial?.timeframe ?? '1h',
    capital: initial?.capital ?? '10000',
    ...(initial?.template_id ?? templateId ? { templateId: initial?.template_id ?? templateId } : {}),
    ...(initial?.params ? { params: initial.params } : {}),
    ...(initial?.symbols ? { symbols: initial.symbols.join(',') } : {}),
    ...(initial?.leverage ? { leverage: initial.leverage } : {}),
    exits: exitsDraftOf(initial?.exits),
  })
  const [slippage, setSlippage] = useState(initial?.slippage_bps ?? '')
  const span = useRunSpan(initial)
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  // The coverage line below Run already says the symbol is unlisted: a click would only be refused with the same words.
  const [symbolRefused, setSymbolRefused] = useState<string>()
  const problem = exitFieldError(error)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    // A repeated custom template runs the version (and the Math.random seed) it ran with before, while the user keeps that template.
    const keeps = initial?.template_version !== undefined && state.draft.templateId === initial.template_id
    const version = keeps ? { template_version: initial.template_version, ...(initial.seed !== undefined ? { seed: initial.seed } : {}) } : {}
    const body: JobCreate = { ...draftBody(state.draft), ...span.body(), ...version, ...(slippage.trim() ? { slippage_bps: slippage.trim() } : {}) }
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
      <StrategyFields state={state} problem={problem} />
      <RunSpanFields span={span} />
      <label>
        Slippage (bps)
        <input name="slippage_bps" inputMode="decimal" placeholder="0" value={slippage} onInput={(e) => setSlippage(e.currentTarget.value)} />
        <small>worsens every market fill, 0 to 1000</small>
        <FieldError problem={problem} field="slippage_bps" />
      </label>
      <div class="wide">
        <ErrorBox error={problem ? undefined : error} />
        <button type="submit" class="primary" disabled={busy || !state.template || symbolRefused !== undefined} data-testid="backtest-submit">
          {busy ? 'Submitting…' : 'Run backtest'}
        </button>
        <RunSpanCoverage span={span} symbols={draftBody(state.draft).symbols} timeframe={state.draft.timeframe} onRefused={setSymbolRefused} />
      </div>
    </form>
  )
}
