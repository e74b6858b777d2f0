import { Command, Option } from 'commander'
import type { PerpetuaClient } from '../../client/perpetua-client.js'
import type { Sweep, SweepRequest, SweepRun } from '../../client/operations.js'
import { readPolled } from '../backtest/read-job.js'
import type { CliContext } from '../context.js'
import { endStatus, followWithProgress } from '../follow.js'
import { type ListFlags, printList, withListFlags } from '../list-command.js'
import { percent, printJson } from '../output.js'
import { configFields, type ConfigFlags, withConfigFlags } from '../backtest/config-flags.js'
import { bodyFrom, integer, withFields } from '../parse.js'
import { gridFlag, spaceFlag, walkForwardFlag } from './grid-flags.js'
import { printSweep, printSweepList } from './sweep-output.js'
import { templateNames } from '../template-names.js'

const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled']
const OBJECTIVES = ['sharpe', 'sortino', 'calmar', 'cagr', 'max_drawdown', 'win_rate', 'profit_factor', 'expected_value', 'total_trades']
/** Runs shown in the table of `sweep run` and `sweep show`. */
const TOP = 10

/** `perpetua sweep run|list|show|cancel`. */
export function sweepCommand(context: CliContext): Command {
  const sweep = new Command('sweep').description('parameter sweeps: one backtest per configuration, and how likely the winner is overfit (signed: scopes backtests:read, backtests:write)')

  withConfigFlags(
    sweep
      .command('run')
      .description('queue a sweep, show its progress on stderr, then its best runs and statistics')
      .option('--file <file>', 'the request body as JSON (- reads stdin); the flags below override its fields')
      .option('--grid <name=values>', 'a swept param: a range (fast=5..50:5) or a list (slow=20,30,50,100); repeatable, the cartesian product is run', gridFlag)
      .option('--samples <n>', 'a random search of this many configurations instead of a grid (with --space)', integer)
      .option('--seed <n>', 'the random search seed (default 1)', integer)
      .option('--space <name=min..max[:step]>', 'a param of the random search; repeatable', spaceFlag),
    'params not swept',
  )
    .addOption(new Option('--objective <metric>', 'the metric that picks the best run (default sharpe)').choices(OBJECTIVES))
    .option('--cscv-blocks <n>', 'S of the PBO, even (default 16)', integer)
    .option('--walk-forward <in,out[,anchored]>', 'also a walk-forward: in-sample and out-of-sample days, e.g. 365,90', walkForwardFlag)
    .option('--detach', 'queue the sweep, print it and return without waiting')
    .option('--json', "print the API's finished sweep (GET /v1/backtest/sweeps/{id}) exactly")
    .addHelpText(
      'after',
      '\nExample: perpetua sweep run --template sma_cross --grid fast=5..50:5 --grid slow=20,30,50,100 \\\n' +
        '  --symbols BTCUSDT --timeframe 1h --start 2023-01-01T00:00:00Z --end 2024-12-31T23:00:00Z\n' +
        'Protective exits sweep as params do: --grid exits.stop_loss=0.01,0.02,0.03 (or --space), over the base\'s --stop-loss ….\n' +
        'Combinations the template refuses (sma_cross fast ≥ slow) are skipped. Ctrl-C stops waiting; the sweep goes on.\n' +
        'Exit 1 when the sweep fails or is cancelled.',
    )
    .action(async (options: RunOptions, command: Command) => {
      const client = context.client(command, 'signed')
      const file = bodyFrom(options.file, {}, {})
      const fileBase = typeof file.base === 'object' && file.base !== null ? (file.base as Record<string, unknown>) : {}
      const base = bodyFrom(undefined, withFields(fileBase, configFields(options)), { json: options.params, pairs: options.param })
      if (base.capital === undefined && base.strategy_id === undefined) base.capital = '10000'
      const request = {
        ...file,
        base,
        ...(options.grid ? { grid: options.grid } : {}),
        ...(options.samples !== undefined || options.space ? { random: { samples: options.samples, ...(options.seed !== undefined ? { seed: options.seed } : {}), space: options.space ?? {} } } : {}),
        ...(options.objective ? { objective: options.objective } : {}),
        ...(options.cscvBlocks !== undefined ? { cscv_blocks: options.cscvBlocks } : {}),
        ...(options.walkForward ? { walk_forward: options.walkForward } : {}),
      } as SweepRequest
      if (options.detach) {
        const queued = await client.sweeps.create(request)
        if (options.json) printJson(context.output, queued)
        else context.output.out(`${queued.id} ${queued.status}: ${queued.config.configurations} configurations; follow it with perpetua sweep show ${queued.id}`)
        return
      }
      const ended = await followWithProgress<Sweep>(context, 'sweep', (wait) => client.sweeps.run(request, wait))
      if (options.json) printJson(context.output, ended)
      else printSweep(context.output, ended, await topRuns(client, ended), await templateNames(client, [ended.config.base.template_id]))
      endStatus(ended)
    })

  withListFlags(
    sweep.command('list').description('your sweeps, newest first').addOption(new Option('--status <status>', 'only sweeps in this status').choices(STATUSES)),
    'sweeps',
    ', 1 to 100 (default 20)',
  ).action(async (options: ListFlags & { status?: Sweep['status'] }, command: Command) => {
    const client = context.client(command, 'signed')
    const query = { status: options.status, limit: options.limit }
    await printList(
      context.output,
      options,
      { page: (cursor) => client.sweeps.list({ ...query, cursor }), all: () => client.sweeps.iterate(query) },
      async (sweeps) => printSweepList(context.output, sweeps, await templateNames(client, sweeps.map((sweep) => sweep.config.base.template_id))),
      'perpetua sweep list',
    )
  })

  sweep
    .command('show')
    .description('one sweep: its configuration, its best runs and its statistics in words')
    .argument('<id>', 'sweep id (sw_…)')
    .option('--json', "print the API's sweep exactly (GET /v1/backtest/sweeps/{id})")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const client = context.client(command, 'signed')
      const found = await readPolled(context, client, 'sweep', id, (signal) => client.sweeps.get(id, signal))
      if (options.json) return printJson(context.output, found)
      printSweep(context.output, found, await topRuns(client, found), await templateNames(client, [found.config.base.template_id]))
    })

  sweep
    .command('cancel')
    .description('cancel a queued or running sweep (runs already stored stay readable)')
    .argument('<id>', 'sweep id (sw_…)')
    .option('--reason <text>', 'why, kept for audit (at most 200 characters)')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { reason?: string; json?: boolean }, command: Command) => {
      const cancelled = await context.client(command, 'signed').sweeps.cancel(id, options.reason)
      if (options.json) return printJson(context.output, cancelled)
      context.output.out(`${cancelled.id} ${cancelled.status} at ${percent(cancelled.progress, 0)}`)
    })

  return sweep
}

/** The best runs stored so far, by the sweep's objective. */
async function topRuns(client: PerpetuaClient, sweep: Sweep): Promise<SweepRun[]> {
  return (await client.sweeps.runs(sweep.id, { sort: 'objective', limit: TOP })).data
}

interface RunOptions extends ConfigFlags {
  file?: string
  grid?: Record<string, (number | boolean)[]>
  samples?: number
  seed?: number
  space?: Record<string, { min: number; max: number; step?: number }>
  objective?: string
  cscvBlocks?: number
  walkForward?: { in_sample_days: number; out_of_sample_days: number; anchored: boolean }
  detach?: boolean
  json?: boolean
}
