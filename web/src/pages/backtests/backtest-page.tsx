import { useEffect, useState } from 'preact/hooks'
import { fullJob, isTerminal, submittedJob, watchBacktest } from '../../api/backtest-watch.js'
import { api } from '../../api/endpoints.js'
import type { Job } from '../../api/types.js'
import { withoutApiAdvice } from '../../components/api-advice.js'
import { ErrorBox, Loading, toError } from '../../components/async.js'
import { money, time } from '../../format.js'
import { StatusBadge } from './backtests-page.js'
import { BacktestResult } from './backtest-result.js'
import { CoverageHint } from './coverage.js'
import { backtestThis, repeatable } from './repeat-config.js'
import { endOf } from './run-span.js'
import { TemplateName } from '../../components/template-name.js'

/** One backtest: live progress while it runs, then its result. */
export function BacktestPage({ id }: { id: string }) {
  const [job, setJob] = useState<Job | undefined>(() => submittedJob(id))
  const [seen, setSeen] = useState<string[]>([])
  const [error, setError] = useState<Error>()

  useEffect(() => {
    setError(undefined)
    const start = submittedJob(id)
    if (start) setJob(start)
    else fullJob(id).then(setJob, (e: unknown) => setError(toError(e)))
  }, [id])

  const status = job?.status
  useEffect(() => {
    if (status) setSeen((previous) => (previous.at(-1) === status ? previous : [...previous, status]))
  }, [status])

  const watching = job !== undefined && !isTerminal(job)
  useEffect(() => {
    if (!watching || !job) return
    return watchBacktest(job, setJob, setError)
  }, [watching, job?.id])

  if (!job) return error ? <ErrorBox error={error} /> : <Loading what={id} />

  const cancel = () => api.cancelBacktest(job.id).then(setJob, (e: unknown) => setError(toError(e)))
  const c = job.config
  return (
    <section data-testid="backtest" data-job-id={job.id}>
      <div class="heading">
        <h1>{job.id}</h1>
        <StatusBadge job={job} />
      </div>
      <p class="muted">
        <TemplateName id={c.template_id} version={c.template_version} /> · {c.symbols.join(', ')} · {c.timeframe} · {c.start.slice(0, 10)} → {c.end.slice(0, 10)} · capital {money(c.capital)} · ×{c.leverage} · {c.fee_model}
        {c.fee_bps ? ` ${c.fee_bps} bps` : ''} · params <code>{JSON.stringify(c.params)}</code>
      </p>
      <div class="progress-box" data-testid="backtest-progress" data-status={job.status} data-progress={job.progress} data-seen={seen.join(',')}>
        <progress max={1} value={job.progress} aria-label="progress" />
        <span>
          {Math.round(job.progress * 100)} % · submitted {time(job.submitted_at)}
          {job.started_at ? ` · started ${time(job.started_at)}` : ''}
          {job.finished_at ? ` · finished ${time(job.finished_at)}` : ''}
        </span>
        {watching ? (
          <button type="button" onClick={cancel} data-testid="cancel-backtest">
            Cancel
          </button>
        ) : null}
      </div>
      <ErrorBox error={error} />
      {job.status === 'failed' && job.error ? (
        <p class="error" data-testid="job-error">
          {job.error.code}: {withoutApiAdvice(job.error.message)}
        </p>
      ) : null}
      {job.status === 'failed' && job.error?.code === 'NO_DATA' ? (
        <CoverageHint symbols={c.symbols} timeframe={c.timeframe} start={c.start.slice(0, 10)} end={c.end.slice(0, 10)} onFit={(range) => backtestThis(repeatable(job, { start: `${range.start}T00:00:00Z`, end: endOf(range.end) }))} />
      ) : null}
      {isTerminal(job) && job.status !== 'done' ? (
        <button type="button" class="primary" onClick={() => backtestThis(repeatable(job))} data-testid="edit-again">
          Edit and run again
        </button>
      ) : null}
      {job.status === 'done' && job.result?.equity_curve ? <BacktestResult job={job} /> : null}
    </section>
  )
}
