import { useMemo, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Sweep, SweepRun } from '../../api/sweep-types.js'
import type { JobCreate } from '../../api/types.js'
import { ErrorBox, Loading, useAsync } from '../../components/async.js'
import { Heatmap } from '../../charts/heatmap.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { LogitHistogram } from '../../charts/logit-histogram.js'
import { num } from '../../format.js'
import { MetricsGrid, METRICS } from '../backtests/metrics.js'
import { backtestThis } from '../backtests/repeat-config.js'
import { blankCellsText, heatCells } from './heatmap-cells.js'
import { equityFromReturns } from './returns-equity.js'
import { RunsTable } from './runs-table.js'
import { luckBarWords, probability, statisticsInWords } from '../../../../src/sweeps/statistics-words.js'
import { runJobConfig } from '../../../../src/sweeps/swept-exits.js'
import { WalkForward } from './walk-forward.js'

/** Every run of the sweep, a page of 1,000 at a time (a sweep holds at most 10,000). */
async function allRuns(sweepId: string): Promise<SweepRun[]> {
  const runs: SweepRun[] = []
  let cursor: string | null = null
  do {
    const page = await api.sweepRuns(sweepId, { limit: 1000, cursor })
    runs.push(...page.data)
    cursor = page.next_cursor
  } while (cursor)
  return runs
}

/** The backtest request that repeats one run: the run as a job's config (its params, exits and the base's seed), as GET …/runs shows it. */
export function runConfig(sweep: Sweep, run: Pick<SweepRun, 'params'>): JobCreate {
  return runJobConfig(sweep.config.base, run.params)
}

/** A done sweep: the statistics in words, the best run, the heatmap, equity, logit histogram, walk-forward and every run. */
export function SweepResult({ sweep }: { sweep: Sweep }) {
  const result = sweep.result!
  const objective = sweep.config.objective
  const objectiveLabel = METRICS.find((m) => m.name === objective)?.label ?? objective
  const swept = Object.keys(sweep.config.grid ?? sweep.config.random?.space ?? {})
  const runs = useAsync(() => allRuns(sweep.id), [sweep.id])
  // The best run's column alone: the whole matrix of a 1,000-configuration sweep over 5 years is ~36 MB of JSON.
  const matrix = useAsync(() => api.sweepReturns(sweep.id, [result.best.run_id]), [sweep.id])
  const bestEquity = useMemo(() => (matrix.data ? equityFromReturns(matrix.data, result.best.run_id, Number(sweep.config.base.capital)) : undefined), [matrix.data])
  const histogram = result.statistics.pbo.histogram
  const statistics = result.statistics
  const luckBar = luckBarWords(statistics.n_trials)

  return (
    <>
      <h2>Is the winner real?</h2>
      <ul class="card sentences" data-testid="statistics-words">
        {statisticsInWords(statistics, { grid: sweep.config.grid, bestParams: result.best.params }).map((s) => (
          <li key={s.name} data-statistic={s.name} data-value={s.value === null ? 'null' : String(s.value)}>
            {s.text}
          </li>
        ))}
      </ul>
      <dl class="facts" data-testid="statistics">
        {(
          [
            ['n_trials', 'Trials (N)', statistics.n_trials, 0],
            ['pbo', 'PBO', statistics.pbo.value, 2, true],
            ['dsr', 'DSR', statistics.dsr, 3, true],
            ['psr', 'PSR', statistics.psr, 3, true],
            ['expected_max_sharpe', 'SR₀ (per day)', statistics.expected_max_sharpe, 4],
            ['sharpe_variance', 'Var of Sharpe (per day)', statistics.sharpe_variance, 6],
            ['combinations', 'CSCV splits', statistics.pbo.combinations, 0],
            ['logit_median', 'Median logit', statistics.pbo.logit_median, 2],
          ] as const
        ).map(([name, label, value, digits, isProbability]) => (
          <div key={name} data-statistic={name} data-value={value === null ? 'null' : String(value)} title={name in luckBar ? luckBar[name as keyof typeof luckBar] : undefined}>
            <dt>{label}</dt>
            <dd>{isProbability && value !== null ? probability(value, digits) : num(value, digits)}</dd>
          </div>
        ))}
      </dl>
      <ul class="hint terms" data-testid="statistics-terms">
        <li data-term="expected_max_sharpe">{luckBar.expected_max_sharpe}</li>
        <li data-term="sharpe_variance">{luckBar.sharpe_variance}</li>
      </ul>

      <h2>Best run</h2>
      <div class="toolbar" data-testid="best-run" data-run-id={result.best.run_id}>
        <span>
          {result.best.run_id} by {objectiveLabel}: <code>{JSON.stringify(result.best.params)}</code>
        </span>
        <button type="button" class="primary" onClick={() => backtestThis(runConfig(sweep, result.best))} data-testid="backtest-best">
          Backtest this configuration
        </button>
      </div>
      <MetricsGrid metrics={result.best.metrics} />
      <h3>Equity of the best run</h3>
      {bestEquity ? (
        <LineChart lines={[{ name: 'Best run', color: '#3b6fd8', points: bestEquity }]} testId="best-equity-chart" label="The best run's equity, one point per day, from its daily returns" />
      ) : matrix.loading ? (
        <Loading what="the best run's daily returns" />
      ) : null}
      <ErrorBox error={matrix.error} />

      <h2>{objectiveLabel} across the parameters</h2>
      {runs.error ? <ErrorBox error={runs.error} /> : !runs.data ? <Loading what="the runs" /> : <ParameterMap sweep={sweep} runs={runs.data} swept={swept} />}

      <h2>Logits of the in-sample winners</h2>
      {histogram ? (
        <LogitHistogram edges={histogram.edges} counts={histogram.counts} pbo={statistics.pbo.value} testId="logit-histogram" />
      ) : (
        <p class="hint">No histogram: {statistics.reasons.pbo ?? 'the PBO was not computed'}.</p>
      )}

      {result.walk_forward ? <WalkForward sweep={sweep} walk={result.walk_forward} bestEquity={bestEquity} /> : null}

      <h2>Runs</h2>
      {runs.data ? <RunsTable runs={runs.data} params={swept} objective={objective} onBacktest={(run) => backtestThis(runConfig(sweep, run))} /> : null}
    </>
  )
}

/** The heatmap of two swept parameters (chosen by the user) against the objective, and the run a click picks. */
function ParameterMap({ sweep, runs, swept }: { sweep: Sweep; runs: SweepRun[]; swept: string[] }) {
  const objective = sweep.config.objective
  const metric = METRICS.find((m) => m.name === objective)
  const [x, setX] = useState(swept[0] ?? '')
  const [chosenY, setY] = useState<string>(swept[1] ?? '')
  // The same parameter on both axes is no map: the rows give way.
  const y = chosenY === x ? '' : chosenY
  const [picked, setPicked] = useState(sweep.result!.best.run_id)
  const map = useMemo(() => heatCells(runs, x, y === '' ? null : y, objective), [runs, x, y, objective])
  const run = runs.find((r) => r.run_id === picked)
  const format = (value: number) => (metric ? metric.show({ ...sweep.result!.best.metrics, [objective]: String(value) }) : num(value))
  return (
    <div data-testid="parameter-map">
      <div class="toolbar">
        <label>
          Across
          <select name="heatmap_x" value={x} onChange={(e) => setX(e.currentTarget.value)}>
            {swept.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Up
          <select name="heatmap_y" value={y} onChange={(e) => setY(e.currentTarget.value)}>
            <option value="">(none)</option>
            {swept.filter((p) => p !== x).map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <span class="hint">Each cell: the best {metric?.label ?? objective} among the runs with those two values.</span>
      </div>
      <Heatmap
        xs={map.xs}
        ys={map.ys}
        xName={x}
        yName={y || 'all'}
        cells={map.cells}
        format={format}
        selected={picked}
        onPick={setPicked}
        testId="heatmap"
        label={`${metric?.label ?? objective} of ${x} against ${y || 'nothing'}`}
        blank={blankCellsText(map.blank, sweep.config.grid ? 'grid' : 'random', metric?.label ?? objective)}
      />
      {run ? (
        <div class="toolbar" data-testid="picked-run" data-run-id={run.run_id}>
          <span>
            {run.run_id}: <code>{JSON.stringify(run.params)}</code> · {metric?.label ?? objective} {format(Number(run.metrics[objective as keyof typeof run.metrics]))}
          </span>
          <button type="button" onClick={() => backtestThis(runConfig(sweep, run))} data-testid="backtest-picked">
            Backtest this configuration
          </button>
        </div>
      ) : null}
    </div>
  )
}
