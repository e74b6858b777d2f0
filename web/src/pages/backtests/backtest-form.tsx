import { useState } from 'preact/hooks'
import { rememberSubmitted } from '../../api/backtest-watch.js'
import { api } from '../../api/endpoints.js'
import type { JobCreate } from '../../api/types.js'
import { ErrorBox, toError } from '../../components/async.js'
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
  })
  const span = useRunSpan(initial)
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    // A repeated custom template runs the version it ran before, while the user keeps that template.
    const version = initial?.template_version !== undefined && state.draft.templateId === initial.template_id ? { template_version: initial.template_version } : {}
    const body: JobCreate = { ...draftBody(state.draft), ...span.body(), ...version }
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
      <RunSpanFields span={span} />
      <div class="wide">
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy || !state.template} data-testid="backtest-submit">
          {busy ? 'Submitting…' : 'Run backtest'}
        </button>
        <RunSpanCoverage span={span} symbols={draftBody(state.draft).symbols} timeframe={state.draft.timeframe} />
      </div>
    </form>
  )
}
