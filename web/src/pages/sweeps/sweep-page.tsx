import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Sweep } from '../../api/sweep-types.js'
import { isSweepTerminal, knownSweep, readSweep, rememberSweep, watchSweep } from '../../api/sweep-watch.js'
import { ErrorBox, Loading, toError } from '../../components/async.js'
import { money, time } from '../../format.js'
import { StatusBadge } from '../backtests/backtests-page.js'
import { SweepResult } from './sweep-result.js'
import { TemplateName } from '../../components/template-name.js'

/** What the sweep varies, in a line: `fast 5..50 (10 values) × slow 4 values`, or the random space. */
function spaceText(sweep: Sweep): string {
  const { grid, random } = sweep.config
  if (grid) return Object.entries(grid).map(([name, values]) => `${name} × ${values.length}`).join(', ')
  if (random) return `${random.samples} random samples (seed ${random.seed ?? 1}) of ${Object.entries(random.space).map(([name, r]) => `${name} ${r.min}…${r.max}`).join(', ')}`
  return ''
}

/** One sweep: its configuration, progress while it runs, then its result. */
export function SweepPage({ id }: { id: string }) {
  const [sweep, setSweep] = useState<Sweep | undefined>(() => knownSweep(id))
  const [error, setError] = useState<Error>()

  useEffect(() => {
    setError(undefined)
    const known = knownSweep(id)
    if (known) setSweep(known)
    else readSweep(id).then(setSweep, (e: unknown) => setError(toError(e)))
  }, [id])

  const watching = sweep !== undefined && !isSweepTerminal(sweep)
  useEffect(() => {
    if (!watching || !sweep) return
    return watchSweep(sweep, setSweep, setError)
  }, [watching, sweep?.id])

  if (!sweep) return error ? <ErrorBox error={error} /> : <Loading what={id} />

  const cancel = () =>
    api.cancelSweep(sweep.id).then(
      (cancelled) => {
        rememberSweep(cancelled)
        setSweep(cancelled)
      },
      (e: unknown) => setError(toError(e)),
    )
  const c = sweep.config
  const b = c.base
  return (
    <section data-testid="sweep" data-sweep-id={sweep.id}>
      <div class="heading">
        <h1>{sweep.id}</h1>
        <StatusBadge job={sweep} />
      </div>
      <p class="muted">
        <TemplateName id={b.template_id} version={b.template_version} /> · {b.symbols.join(', ')} · {b.timeframe} · {b.start.slice(0, 10)} → {b.end.slice(0, 10)} · capital {money(b.capital)} · ×{b.leverage} · {b.fee_model}
        {b.fee_bps ? ` ${b.fee_bps} bps` : ''}
      </p>
      <p class="muted" data-testid="sweep-space">
        {spaceText(sweep)} → {c.configurations.toLocaleString('en-US')} configurations{c.skipped ? ` (${c.skipped} skipped by the template's rules)` : ''} · objective {c.objective} · {c.cscv_blocks} CSCV blocks
        {c.walk_forward ? ` · walk-forward ${c.walk_forward.in_sample_days} d in / ${c.walk_forward.out_of_sample_days} d out${c.walk_forward.anchored ? ', anchored' : ''}` : ''}
      </p>
      <div class="progress-box" data-testid="sweep-progress" data-status={sweep.status} data-progress={sweep.progress}>
        <progress max={1} value={sweep.progress} aria-label="progress" />
        <span>
          {Math.round(sweep.progress * 100)} % of {c.configurations.toLocaleString('en-US')} runs · submitted {time(sweep.submitted_at)}
          {sweep.started_at ? ` · started ${time(sweep.started_at)}` : ''}
          {sweep.finished_at ? ` · finished ${time(sweep.finished_at)}` : ''}
        </span>
        {watching ? (
          <button type="button" onClick={cancel} data-testid="cancel-sweep">
            Cancel
          </button>
        ) : null}
      </div>
      <ErrorBox error={error} />
      {sweep.status === 'failed' && sweep.error ? (
        <p class="error" data-testid="sweep-error">
          {sweep.error.code}: {sweep.error.message}
        </p>
      ) : null}
      {sweep.status === 'done' && sweep.result ? <SweepResult sweep={sweep} /> : null}
    </section>
  )
}
