import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Objective, SweepCreate } from '../../api/sweep-types.js'
import { rememberSweep } from '../../api/sweep-watch.js'
import { ErrorBox, toError } from '../../components/async.js'
import { exitFieldError } from '../../components/exit-fields.js'
import { draftBody, StrategyFields, useStrategyDraft } from '../../components/strategy-fields.js'
import { navigate } from '../../router.js'
import { RunSpanCoverage, RunSpanFields, useRunSpan } from '../backtests/run-span.js'
import { METRICS } from '../backtests/metrics.js'
import { SearchSpace } from './search-space.js'
import { emptySearchSpace, searchSpaceBody } from './search-space-draft.js'

/** The metrics a sweep may rank by (the API's list): every metric of a backtest but the average trade's length. */
export const OBJECTIVES = METRICS.filter((m) => m.name !== 'avg_trade_duration_seconds') as { name: Objective; label: string }[]

/**
 * A new sweep: the backtest form's fields as its base (unswept params keep the values set there), the
 * parameters to sweep, the objective, the CSCV blocks and an optional walk-forward. `templateId` picks
 * the template it starts on (a template's page).
 */
export function SweepForm({ templateId }: { templateId?: string } = {}) {
  const state = useStrategyDraft({ timeframe: '1h', capital: '10000', ...(templateId ? { templateId } : {}) })
  const span = useRunSpan()
  const [space, setSpace] = useState(emptySearchSpace)
  const [objective, setObjective] = useState<Objective>('sharpe')
  const [blocks, setBlocks] = useState('16')
  const [walk, setWalk] = useState({ on: false, inSample: '90', outOfSample: '30', anchored: false })
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  // The coverage line below Run already says the symbol is unlisted: a click would only be refused with the same words.
  const [symbolRefused, setSymbolRefused] = useState<string>()

  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    let body: SweepCreate
    try {
      body = {
        base: { ...draftBody(state.draft), ...span.body() },
        ...searchSpaceBody(space),
        objective,
        cscv_blocks: Number(blocks),
        ...(walk.on ? { walk_forward: { in_sample_days: Number(walk.inSample), out_of_sample_days: Number(walk.outOfSample), anchored: walk.anchored } } : {}),
      }
    } catch (failure) {
      setError(toError(failure))
      return
    }
    setBusy(true)
    try {
      const sweep = await api.createSweep(body)
      rememberSweep(sweep)
      navigate(`/sweeps/${sweep.id}`)
    } catch (failure) {
      setError(toError(failure))
      setBusy(false)
    }
  }

  return (
    <form class="card form-grid" onSubmit={submit} data-testid="sweep-form">
      <StrategyFields state={state} problem={exitFieldError(error)} />
      <RunSpanFields span={span} />
      {state.template ? (
        <div class="wide">
          <SearchSpace template={state.template} value={space} onChange={setSpace} />
        </div>
      ) : null}
      <label>
        Objective
        <select name="objective" value={objective} onChange={(e) => setObjective(e.currentTarget.value as Objective)}>
          {OBJECTIVES.map((m) => (
            <option key={m.name} value={m.name}>
              {m.label}
            </option>
          ))}
        </select>
        <small>picks the best run and each walk-forward window's</small>
      </label>
      <label>
        CSCV blocks (S)
        <input type="number" name="cscv_blocks" min={2} max={20} step={2} required value={blocks} onInput={(e) => setBlocks(e.currentTarget.value)} />
        <small>even; the PBO tries every half of them as in-sample</small>
      </label>
      <fieldset class="wide walk-forward">
        <legend>
          <label class="check">
            <input type="checkbox" name="walk_forward" checked={walk.on} onChange={(e) => setWalk({ ...walk, on: e.currentTarget.checked })} />
            Walk-forward
          </label>
        </legend>
        {walk.on ? (
          <div class="form-grid">
            <label>
              In-sample days
              <input type="number" name="in_sample_days" min={2} step={1} required value={walk.inSample} onInput={(e) => setWalk({ ...walk, inSample: e.currentTarget.value })} />
            </label>
            <label>
              Out-of-sample days
              <input type="number" name="out_of_sample_days" min={1} step={1} required value={walk.outOfSample} onInput={(e) => setWalk({ ...walk, outOfSample: e.currentTarget.value })} />
            </label>
            <label class="check">
              <input type="checkbox" name="anchored" checked={walk.anchored} onChange={(e) => setWalk({ ...walk, anchored: e.currentTarget.checked })} />
              Anchored (every in-sample window starts on the first day)
            </label>
          </div>
        ) : (
          <p class="hint">Optimise on each in-sample window, trade its winner on the next days, and stitch those days together.</p>
        )}
      </fieldset>
      <div class="wide">
        <ErrorBox error={exitFieldError(error) ? undefined : error} />
        <button type="submit" class="primary" disabled={busy || !state.template || symbolRefused !== undefined} data-testid="sweep-submit">
          {busy ? 'Submitting…' : 'Run sweep'}
        </button>
        <RunSpanCoverage span={span} symbols={draftBody(state.draft).symbols} timeframe={state.draft.timeframe} onRefused={setSymbolRefused} />
      </div>
    </form>
  )
}
