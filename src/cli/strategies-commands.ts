import { Command, Option } from 'commander'
import type { StreamMessage, Strategy, StrategyCreate, StrategyUpdate } from '../client/operations.js'
import { PerpetuaError } from '../client/errors.js'
import { DRY_RUN_HINT } from '../strategies/live-deploy-question.js'
import { UsageError } from './cli-errors.js'
import { confirmLiveDeploy, type DeployModeFlags, deployMode } from './live-deploy-confirm.js'
import { type CliContext, Interrupted } from './context.js'
import { type ListFlags, printList, withListFlags } from './list-command.js'
import { amount, decimal, fieldTable, money, NONE, type Output, percent, printJson, QUOTE, table, time } from './output.js'
import { type PriceOf, pricesOf } from './prices.js'
import { exitsText } from '../backtests/exit-text.js'
import { printProtectiveOrders } from './protective-orders.js'
import { type TemplateNamer, templateNames, templateWithId } from './template-names.js'
import { exitsField, type ExitFlags, withExitFlags } from './backtest/config-flags.js'
import { bodyFrom, integer, jsonObject, keyValue, list } from './parse.js'

const STATUSES = ['draft', 'deployed', 'paused', 'stopped', 'error']
const TIMEFRAMES = ['1m', '5m', '15m', '1h', '4h', '1d']

/** `perpetua strategies list|show|positions|create|update|deploy|pause|watch`. */
export function strategiesCommand(context: CliContext): Command {
  const strategies = new Command('strategies').description('your strategies: create, deploy, pause and follow them (signed: scopes strategies:read, strategies:write)')

  withListFlags(
    strategies
      .command('list')
      .description('your strategies with their status and stats, newest first')
      .addOption(new Option('--status <status>', 'only strategies in this status').choices(STATUSES)),
    'strategies',
    '',
  ).action(async (options: ListFlags & { status?: Strategy['status'] }, command: Command) => {
    const client = context.client(command, 'signed')
    const query = { status: options.status, limit: options.limit }
    await printList(
      context.output,
      options,
      { page: (cursor) => client.strategies.list({ ...query, cursor }), all: () => client.strategies.iterate(query) },
      async (items) => printStrategyList(context.output, items, await templateNames(client, items.map((s) => s.template_id))),
      'perpetua strategies list',
    )
  })

  strategies
    .command('show')
    .description('one strategy')
    .argument('<id>', 'strategy id (strat_…)')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const client = context.client(command, 'signed')
      const strategy = await client.strategies.get(id)
      if (options.json) return printJson(context.output, strategy)
      printStrategy(context.output, strategy, await templateNames(client, [strategy.template_id]))
    })

  strategies
    .command('positions')
    .description("what the strategy's current (or last) run holds now, from its ledger; a live run's protective orders as the exchange holds them")
    .argument('<id>', 'strategy id (strat_…)')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const positions = await context.client(command, 'signed').strategies.positions(id)
      if (options.json) return printJson(context.output, positions)
      if (positions.length === 0) return context.output.err('no open positions')
      const priceOf = await pricesOf(context, command, positions.map((p) => p.symbol))
      context.output.out(
        table(
          ['symbol', 'side', 'qty', 'entry', 'mark', `unrealized pnl (${QUOTE})`, 'liquidation', 'stop', 'take profit', 'trailing stop', 'trigger', 'opened', 'mode'],
          positions.map((p) => [
            p.symbol,
            p.side,
            p.qty,
            priceOf(p.symbol, p.entry_price),
            priceOf(p.symbol, p.mark_price),
            amount(p.unrealized_pnl),
            priceOf(p.symbol, p.liquidation_price),
            priceOf(p.symbol, p.stop_price),
            priceOf(p.symbol, p.take_profit_price),
            trailingText(p.trailing, (value) => priceOf(p.symbol, value)),
            p.trigger ?? NONE,
            time(p.opened_at),
            p.mode,
          ]),
        ),
      )
      printProtectiveOrders(context.output, positions, priceOf)
    })

  withExitFlags(
    strategyFields(
      strategies
        .command('create')
        .description('store a strategy (a template with its parameters, symbols and capital) as a draft')
        .option('--file <file>', 'the request body as JSON (- reads stdin); the flags below override its fields'),
    ),
  )
    .option('--json', "print the API's answer exactly")
    .action(async (options: CreateOptions, command: Command) => {
      const client = context.client(command, 'signed')
      const strategy = await client.strategies.create(strategyBody(options) as StrategyCreate)
      if (options.json) return printJson(context.output, strategy)
      printStrategy(context.output, strategy, await templateNames(client, [strategy.template_id]))
    })

  withExitFlags(
    strategyFields(
      strategies
        .command('update')
        .description('change a strategy that is not deployed (a stopped one goes back to draft); only the fields given change')
        .argument('<id>', 'strategy id (strat_…)')
        .option('--file <file>', 'the changes as JSON (- reads stdin); the flags below override its fields'),
    ),
  )
    .option('--no-exits', 'remove the protective exits')
    .option('--json', "print the API's answer exactly")
    .addHelpText('after', '\nThe exit flags replace the stored exits as a whole: give every exit the strategy keeps (perpetua strategies show lists them).')
    .action(async (id: string, options: UpdateOptions, command: Command) => {
      const body = strategyBody(options)
      // Commander sets exits false for --no-exits: the API removes them on null.
      if (options.exits === false) {
        if (body.exits !== undefined) throw new UsageError('--no-exits removes the exits: give it without exit flags')
        body.exits = null
      }
      const client = context.client(command, 'signed')
      const strategy = await client.strategies.update(id, body as StrategyUpdate)
      if (options.json) return printJson(context.output, strategy)
      printStrategy(context.output, strategy, await templateNames(client, [strategy.template_id]))
    })

  strategies
    .command('deploy')
    .description('start running a draft or paused strategy: --live on your exchange key, or --dry-run on your paper wallet (one of them is required)')
    .argument('<id>', 'strategy id (strat_…)')
    .option('--live', 'place real orders on your newest verified exchange key; asks first on a terminal')
    .option('--dry-run', 'trade on live market data against the paper wallet, placing no real orders')
    .option('--yes', 'deploy --live without asking (required off a terminal)')
    .option('--capital <decimal>', 'capital for this run only (default: the stored capital)')
    .option('--leverage <n>', 'leverage for this run only, 1 to 20', integer)
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: DeployModeFlags & { json?: boolean }, command: Command) => {
      const dryRun = deployMode(options)
      const client = context.client(command, 'signed')
      if (!dryRun) await confirmLiveDeploy(client, id, options, context.interrupted())
      const strategy = await client.strategies
        .deploy(id, {
          dry_run: dryRun,
          ...(options.capital === undefined ? {} : { capital: options.capital }),
          ...(options.leverage === undefined ? {} : { leverage: options.leverage }),
        })
        .catch((error: unknown) => {
          // The API's hint names its body field; a CLI user's way to a dry run is the flag.
          if (error instanceof PerpetuaError) error.message = error.message.replace(DRY_RUN_HINT, 'deploy with --dry-run')
          throw error
        })
      if (options.json) return printJson(context.output, strategy)
      // The mode as the server recorded it: a live deploy trades real money and says so.
      const mode = strategy.mode === 'live' ? ` ${modeText(strategy)}` : strategy.mode === 'dry_run' ? ' (dry run)' : ''
      context.output.out(`${strategy.id} ${strategy.status}${mode} at ${time(strategy.deployed_at)}: follow it with perpetua strategies watch ${strategy.id}`)
    })

  strategies
    .command('pause')
    .description('stop a deployed strategy, optionally closing its positions first')
    .argument('<id>', 'strategy id (strat_…)')
    .option('--close-positions', 'close every open position with reduce-only market orders before pausing')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { closePositions?: boolean; json?: boolean }, command: Command) => {
      const strategy = await context.client(command, 'signed').strategies.pause(id, { close_positions: options.closePositions === true })
      if (options.json) return printJson(context.output, strategy)
      const s = strategy.stats
      context.output.out(`${strategy.id} ${strategy.status}: open positions ${s.open_positions}, total pnl ${money(s.total_pnl)}, trades ${s.total_trades}, win rate ${percent(s.win_rate)}`)
    })

  strategies
    .command('watch')
    .description("follow a strategy's status stream, one line per message, until Ctrl-C (reconnects when the connection drops)")
    .argument('<id>', 'strategy id (strat_…)')
    .option('--json', 'print each message exactly as the stream sent it, one JSON object per line')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const client = context.client(command, 'signed')
      const { output } = context
      const signal = context.interrupted()
      // Every symbol's tick, read before following: a message's symbol is known only when it arrives.
      const priceOf = options.json ? undefined : await pricesOf(context, command)
      const stream = client.strategies.follow(id, {
        onMessage: (message) => output.out(options.json ? JSON.stringify(message) : messageLine(message, priceOf)),
        onOpen: ({ reconnects }) => output.err(reconnects === 0 ? `following ${id} (Ctrl-C to stop)` : `reconnected to ${id}`),
        onReconnecting: ({ delayMs, reason }) => output.err(`connection lost (${reason}); reconnecting in ${decimal(delayMs / 1000, 1)} s`),
      })
      const stop = () => stream.close()
      signal.addEventListener('abort', stop, { once: true })
      try {
        await stream.ended // rejects with the API's refusal (404, 401…), which ends the command with it
      } finally {
        signal.removeEventListener('abort', stop)
      }
      if (signal.aborted && signal.reason instanceof Interrupted) output.err(`stopped following ${id}`)
    })

  return strategies
}

/** The fields a strategy is created with, for create and update. */
function strategyFields(command: Command): Command {
  return command
    .option('--name <name>', 'a name for you to recognise it')
    .option('--template <id>', 'template id, e.g. sma_cross')
    .option('--params <json>', 'template parameters as a JSON object', jsonObject)
    .option('--param <name=value>', 'one template parameter (repeatable; the value is JSON when it parses, else a string)', keyValue)
    .option('--symbols <list>', 'symbols, comma-separated or repeated', list)
    .addOption(new Option('--timeframe <tf>', 'bar interval').choices(TIMEFRAMES))
    .option('--capital <decimal>', 'capital in the quote currency')
    .option('--leverage <n>', 'leverage, 1 to 20', integer)
}

function strategyBody(options: CreateOptions): Record<string, unknown> {
  return bodyFrom(
    options.file,
    {
      name: options.name,
      template_id: options.template,
      symbols: options.symbols,
      timeframe: options.timeframe,
      capital: options.capital,
      leverage: options.leverage,
      exits: exitsField(options),
    },
    { json: options.params, pairs: options.param },
  )
}

interface CreateOptions extends ExitFlags {
  file?: string
  name?: string
  template?: string
  params?: Record<string, unknown>
  param?: Record<string, unknown>
  symbols?: string[]
  timeframe?: string
  capital?: string
  leverage?: number
  json?: boolean
}

interface UpdateOptions extends CreateOptions {
  /** false with --no-exits */
  exits?: boolean
}

/** One stream message as a line: its time, its type, then what it says; prices to the tick when `priceOf` knows it. */
export function messageLine(message: StreamMessage, priceOf?: PriceOf): string {
  const d = message.data as Record<string, unknown>
  const text = (key: string) => (d[key] === undefined || d[key] === null ? '' : String(d[key]))
  const tick = (key: string) => (priceOf && text(key) !== '' ? priceOf(text('symbol'), text(key)) : text(key))
  let detail: string
  switch (message.type) {
    case 'status': {
      const stats = (d.stats ?? {}) as Record<string, unknown>
      detail = `${text('status')} | open positions ${stats.open_positions ?? 0} | pnl ${money(stats.total_pnl as string)} | trades ${stats.total_trades ?? 0} | win rate ${percent(stats.win_rate as string)}`
      break
    }
    case 'order':
      detail = `${text('symbol')} ${text('side')} ${text('qty')} @ ${tick('price')} fee ${money(text('fee') || null, 4)} ${text('status')} ${text('client_order_id')}`
      break
    case 'position_opened':
      detail = `${text('symbol')} ${text('side')} ${text('qty')} @ ${tick('entry_price')}`
      break
    case 'position_closed':
      detail = `${text('symbol')} ${text('side')} ${text('qty')} ${tick('entry_price')} -> ${tick('exit_price')} pnl ${money(text('pnl') || null)} (${text('exit_reason')})`
      break
    case 'error':
      detail = `${text('code')} ${text('message')}`
      break
    default:
      detail = JSON.stringify(d)
  }
  return `${time(message.time)} ${message.type} ${detail}`.trimEnd()
}

function printStrategy(output: Output, s: Strategy, name: TemplateNamer): void {
  output.out(
    fieldTable([
      ['id', s.id],
      ['name', s.name],
      ['status', s.status],
      ['mode', modeText(s)],
      ...(s.last_error ? ([['last error', `${s.last_error.code}: ${s.last_error.message} (${time(s.last_error.at)})`]] as [string, string][]) : []),
      ['last bar', time(s.last_bar_at)],
      ['template', templateWithId(name, s.template_id, s.template_version)],
      ['params', JSON.stringify(s.params)],
      ['symbols', s.symbols.join(',')],
      ['timeframe', s.timeframe],
      ['capital', money(s.capital)],
      ['leverage', s.leverage],
      ['exits', exitsText(s.exits) ?? NONE],
      ['deployed at', time(s.deployed_at)],
      ['open positions', s.stats.open_positions],
      ['total pnl', money(s.stats.total_pnl)],
      ['total trades', s.stats.total_trades],
      ['win rate', percent(s.stats.win_rate)],
      ['created', time(s.created_at)],
      ['updated', time(s.updated_at)],
    ]),
  )
}

/** A position's trailing stop: its stop now, else where it starts ("activates at 61,234.5"), or "-". */
function trailingText(trailing: { activation_price: string | null; stop_price: string | null } | null, tick: (value: string) => string): string {
  if (!trailing) return NONE
  if (trailing.stop_price !== null) return tick(trailing.stop_price)
  return trailing.activation_price !== null ? `activates at ${tick(trailing.activation_price)}` : NONE
}

/** The run's mode, loud for live: "LIVE on exchange key ek_… (main)", "dry run (paper wallet)", or "-" before the first deploy. */
function modeText(s: Strategy): string {
  if (s.mode === 'live') return `LIVE on exchange key ${s.exchange_key?.id ?? '?'}${s.exchange_key?.label ? ` (${s.exchange_key.label})` : ''}`
  if (s.mode === 'dry_run') return 'dry run (paper wallet)'
  return '-'
}

function printStrategyList(output: Output, strategies: Strategy[], name: TemplateNamer): void {
  if (strategies.length === 0) return output.err('no strategies')
  output.out(
    table(
      ['id', 'name', 'status', 'mode', 'template', 'symbols', 'tf', `capital (${QUOTE})`, 'lev', 'open', `pnl (${QUOTE})`, 'trades', 'win rate', 'deployed at'],
      strategies.map((s) => [
        s.id,
        s.name,
        s.status,
        s.mode === 'live' ? 'LIVE' : s.mode === 'dry_run' ? 'dry run' : '-',
        name(s.template_id, s.template_version),
        s.symbols.join(','),
        s.timeframe,
        amount(s.capital),
        s.leverage,
        s.stats.open_positions,
        amount(s.stats.total_pnl),
        s.stats.total_trades,
        percent(s.stats.win_rate),
        time(s.deployed_at),
      ]),
    ),
  )
}
