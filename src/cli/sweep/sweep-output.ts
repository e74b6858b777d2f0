import type { Sweep, SweepRun } from '../../client/operations.js'
import { type TemplateNamer, templateWithId } from '../template-names.js'
import { decimal, fieldTable, NONE, type Output, percent, table, time } from '../output.js'
import { efficiencyWords, probability, statisticsInWords as sentences, WALK_FORWARD_EFFICIENCY } from '../../sweeps/statistics-words.js'

/** A sweep: its configuration line, then its best runs and statistics (done) or its status. */
export function printSweep(output: Output, sweep: Sweep, top: SweepRun[], name: TemplateNamer): void {
  const c = sweep.config
  const b = c.base
  const search = c.grid ? `grid of ${Object.keys(c.grid).join(' × ')}` : `random search (${c.random?.samples} samples, seed ${c.random?.seed})`
  output.out(
    `${sweep.id} ${sweep.status}: ${templateWithId(name, b.template_id, b.template_version)} ${b.symbols.join(',')} ${b.timeframe}, ${time(b.start)} to ${time(b.end)}; ${search}: ${c.configurations} configurations` +
      (c.skipped > 0 ? ` (${c.skipped} skipped: the template refuses them)` : '') +
      `, objective ${c.objective}`,
  )
  if (top.length > 0) output.out(runsTable(top, sweptParams(sweep), c.objective))
  if (sweep.status !== 'done' || !sweep.result) {
    output.out(
      fieldTable([
        ['status', sweep.status],
        ['progress', percent(sweep.progress, 1)],
        ['submitted', time(sweep.submitted_at)],
        ['started', time(sweep.started_at)],
        ['finished', time(sweep.finished_at)],
      ]),
    )
    if (sweep.error) output.out(`error: ${sweep.error.message} (${sweep.error.code})`)
    return
  }
  output.out(statisticsInWords(sweep).join('\n'))
}

/** The params a sweep varies: the grid's or the random space's names. */
export function sweptParams(sweep: Sweep): string[] {
  return Object.keys(sweep.config.grid ?? sweep.config.random?.space ?? {})
}

function runsTable(runs: SweepRun[], swept: string[], objective: string): string {
  type Metric = keyof SweepRun['metrics']
  const shown: [string, Metric, (value: never) => string][] = [
    ['sharpe', 'sharpe', decimal],
    ['cagr', 'cagr', percent],
    ['max dd', 'max_drawdown', percent],
    ['trades', 'total_trades', String],
  ]
  // The objective first, unless it is one of the columns shown anyway (a sweep by sharpe shows sharpe once).
  const columns = shown.some(([, metric]) => metric === objective) ? shown : [[objective, objective as Metric, decimal] as (typeof shown)[number], ...shown]
  return table(
    ['run', ...swept, ...columns.map(([label]) => label)],
    runs.map((run) => [run.run_id, ...swept.map((name) => String(run.params[name] ?? NONE)), ...columns.map(([, metric, format]) => format(run.metrics[metric] as never))]),
  )
}

/** The statistics as sentences a trader reads: what each number says about the winner. */
export function statisticsInWords(sweep: Sweep): string[] {
  const result = sweep.result!
  const s = result.statistics
  const best = result.best
  const params = sweptParams(sweep).map((name) => `${name}=${String(best.params[name])}`).join(', ')
  const lines = [
    `best: ${best.run_id} (${params}), ${sweep.config.objective} ${decimal(best.metrics[sweep.config.objective as keyof typeof best.metrics] as string | number | null)}`,
    ...sentences(s, { grid: sweep.config.grid, bestParams: best.params }).map((sentence) => sentence.text),
  ]
  const wf = result.walk_forward
  if (wf) {
    const stitched = wf.metrics
    lines.push(
      `walk-forward (${wf.anchored ? 'anchored' : 'rolling'}, by ${wf.objective}): ${wf.windows.length} windows` +
        (stitched ? `, out of sample: return ${percent(stitched.total_return)}, max drawdown ${percent(stitched.max_drawdown)}` : '') +
        `, efficiency ${efficiencyWords(wf.efficiency, wf.reason)}.`,
      WALK_FORWARD_EFFICIENCY,
    )
  }
  return lines
}

/** A probability for the list: never 1.00 for 0.9995 (issue 35). */
const chance = (p: number | null | undefined): string => (p === null || p === undefined ? NONE : probability(p))

export function printSweepList(output: Output, sweeps: Sweep[], name: TemplateNamer): void {
  if (sweeps.length === 0) return output.err('no sweeps')
  output.out(
    table(
      ['id', 'status', 'progress', 'template', 'symbols', 'tf', 'configurations', 'objective', 'best', 'PBO', 'DSR', 'submitted'],
      sweeps.map((sweep) => [
        sweep.id,
        sweep.status,
        percent(sweep.progress, 0),
        name(sweep.config.base.template_id, sweep.config.base.template_version),
        sweep.config.base.symbols.join(','),
        sweep.config.base.timeframe,
        sweep.config.configurations,
        sweep.config.objective,
        sweep.result?.best.run_id ?? NONE,
        chance(sweep.result?.statistics.pbo.value),
        chance(sweep.result?.statistics.dsr),
        time(sweep.submitted_at),
      ]),
    ),
  )
}
