import { Command, Option } from 'commander'
import type { PerpetuaClient } from '../../client/perpetua-client.js'
import type { Sweep, SweepRequest, SweepRun } from '../../client/operations.js'
import { readPolled } from '../backtest/read-job.js'
import type { CliContext } from '../context.js'
import { endStatus, followWithProgress } from '../follow.js'
import { type ListFlags, printList, withListFlags } from '../list-command.js'
import { percent, printJson } from '../output.js'
import { bodyFrom, integer, jsonObject, keyValue, list } from '../parse.js'
import { gridFlag, spaceFlag, walkForwardFlag } from './grid-flags.js'
import { printSweep, printSweepList } from './sweep-output.js'

const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled']
const TIMEFRAMES = ['1m', '5m', '15m', '1h', '4h', '1d']
const FEE_MODELS = ['none', 'fixed_bps', 'tiered_maker_taker', 'match_exchange']
const OBJECTIVES = ['sharpe', 'sortino', 'calmar', 'cagr', 'max_drawdown', 'win_rate', 'profit_factor', 'expected_value', 'total_trades']
/** Runs shown in the table of `sweep run` and `sweep show`. */
const TOP = 10

/** `perpetua sweep run|list|show|cancel`. */
export function sweepCommand(context: CliContext): Command {
  const sweep = new Command('sweep').description('parameter sweeps: one backtest per configuration, and how likely the winner is overfit (signed: scopes backtests:read, backtests:write)')

  sweep
    .command('run')
    .description('queue a sweep, show its progress on stderr, then its best runs and statistics')
    .option('--file <file>', 'the request body as JSON (- reads stdin); the flags below override its fields')
    .option('--template <id>', 'template id, e.g. sma_cross')
    .option('--grid <name=values>', 'a swept param: a range (fast=5..50:5) or a list (slow=20,30,50,100); repeatable, the cartesian product is run', gridFlag)
    .option('--samples <n>', 'a random search of this many configurations instead of a grid (with --space)', integer)
    .option('--seed <n>', 'the random search seed (default 1)', integer)
    .option('--space <name=min..max[:step]>', 'a param of the random search; repeatable', spaceFlag)
    .option('--params <json>', 'params not swept, as a JSON object', jsonObject)
    .option('--param <name=value>', 'one param not swept (repeatable)', keyValue)
    .option('--symbols <list>', 'symbols, comma-separated or repeated, e.g. BTCUSDT', list)
    .addOption(new Option('--timeframe <tf>', 'bar interval').choices(TIMEFRAMES))
    .option('--start <iso>', 'first bar, ISO 8601 UTC (inclusive)')
    .option('--end <iso>', 'last bar, ISO 8601 UTC (inclusive)')
    .option('--capital <decimal>', 'starting equity, e.g. 10000 (default 10000)')
    .option('--leverage <n>', 'leverage (default 1)', integer)
    .addOption(new Option('--fee-model <model>', 'fee model (default fixed_bps)').choices(FEE_MODELS))
    .option('--fee-bps <decimal>', 'fee per fill in basis points with fixed_bps (default 5)')
    .option('--strategy <id>', 'start from a stored strategy (strat_…)')
    .addOption(new Option('--objective <metric>', 'the metric that picks the best run (default sharpe)').choices(OBJECTIVES))
    .option('--cscv-blocks <n>', 'S of the PBO, even (default 16)', integer)
    .option('--walk-forward <in,out[,anchored]>', 'also a walk-forward: in-sample and out-of-sample days, e.g. 365,90', walkForwardFlag)
    .option('--detach', 'queue the sweep, print it and return without waiting')
    .option('--json', "print the API's finished sweep (GET /v1/backtest/sweeps/{id}) exactly")
    .addHelpText(
      'after',
      '\nExample: perpetua sweep run --template sma_cross --grid fast=5..50:5 --grid slow=20,30,50,100 \\\n' +
        '  --symbols BTCUSDT --timeframe 1h --start 2023-01-01T00:00:00Z --end 2024-12-31T23:00:00Z\n' +
        'Combinations the template refuses (sma_cross fast ≥ slow) are skipped. Ctrl-C stops waiting; the sweep goes on.\n' +
        'Exit 1 when the sweep fails or is cancelled.',
    )
    .action(async (options: RunOptions, command: Command) => {
      const client = context.client(command, 'signed')
      const file = bodyFrom(options.file, {}, {})
      const base = bodyFrom(
        undefined,
        {
          ...(typeof file.base === 'object' && file.base !== null ? (file.base as Record<string, unknown>) : {}),
          template_id: options.template,
          symbols: options.symbols,
          timeframe: options.timeframe,
          start: options.start,
          end: options.end,
          capital: options.capital,
          leverage: options.leverage,
          fee_model: options.feeModel,
          fee_bps: options.feeBps,
          strategy_id: options.strategy,
        },
        { json: options.params, pairs: options.param },
      )
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
      else printSweep(context.output, ended, await topRuns(client, ended))
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
      (sweeps) => printSweepList(context.output, sweeps),
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
      printSweep(context.output, found, await topRuns(client, found))
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

interface RunOptions {
  file?: string
  template?: string
  grid?: Record<string, (number | boolean)[]>
  samples?: number
  seed?: number
  space?: Record<string, { min: number; max: number; step?: number }>
  params?: Record<string, unknown>
  param?: Record<string, unknown>
  symbols?: string[]
  timeframe?: string
  start?: string
  end?: string
  capital?: string
  leverage?: number
  feeModel?: string
  feeBps?: string
  strategy?: string
  objective?: string
  cscvBlocks?: number
  walkForward?: { in_sample_days: number; out_of_sample_days: number; anchored: boolean }
  detach?: boolean
  json?: boolean
}
