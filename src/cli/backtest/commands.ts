import { Command, Option } from 'commander'
import type { BacktestJob, BacktestRequest } from '../../client/operations.js'
import type { CliContext } from '../context.js'
import { endStatus, followWithProgress } from '../follow.js'
import { type ListFlags, printList, withListFlags } from '../list-command.js'
import { percent, printJson } from '../output.js'
import { bodyFrom } from '../parse.js'
import { configFields, type ConfigFlags, withConfigFlags } from './config-flags.js'
import { printJob, printJobList } from './job-output.js'
import { pricesOf } from '../prices.js'
import { templateNames } from '../template-names.js'
import { readJob } from './read-job.js'

const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled']

/** `perpetua backtest run|list|show|cancel`. */
export function backtestCommand(context: CliContext): Command {
  const backtest = new Command('backtest').description('run and read backtests (signed: scopes backtests:read, backtests:write)')

  withConfigFlags(
    backtest
      .command('run')
      .description('queue a backtest, show its progress on stderr while it runs, then its metrics')
      .option('--file <file>', 'the request body as JSON (- reads stdin); the flags below override its fields'),
  )
    .option('--detach', 'queue the job, print it and return without waiting')
    .option('--json', "print the API's finished job (GET /v1/backtest/jobs/{id}) exactly, instead of the table")
    .addHelpText(
      'after',
      '\nLooks at the job 0.75 s after queuing it, then as the API asks (every 5 s at most, backing off after a\n' +
        'minute); a job that finishes in under a second returns then. Ctrl-C stops waiting;\n' +
        'the job goes on (perpetua backtest show|cancel ID). Exit 1 when the job fails or is cancelled.',
    )
    .action(async (options: RunOptions, command: Command) => {
      const client = context.client(command, 'signed')
      const request = bodyFrom(options.file, configFields(options), { json: options.params, pairs: options.param }) as BacktestRequest
      // The API requires params; without any (and no stored strategy to take them from) the template's defaults are meant.
      if (request.params === undefined && request.strategy_id === undefined) request.params = {}
      if (options.detach) {
        const job = await client.backtests.create(request)
        if (options.json) printJson(context.output, job)
        else context.output.out(`${job.id} ${job.status}: follow it with perpetua backtest show ${job.id}`)
        return
      }
      const job = await followWithProgress<BacktestJob>(context, 'backtest', (wait) => client.backtests.run(request, wait))
      if (options.json) printJson(context.output, job)
      else printJob(context.output, job, await templateNames(client, [job.config.template_id]))
      endStatus(job)
    })

  withListFlags(
    backtest
      .command('list')
      .description('your backtests, newest first')
      .addOption(new Option('--status <status>', 'only jobs in this status').choices(STATUSES))
      .option('--template <id>', 'only jobs of this template')
      .option('--from <iso>', 'submitted at or after (ISO 8601 UTC)')
      .option('--to <iso>', 'submitted before (ISO 8601 UTC)'),
    'jobs',
    ', 1 to 100 (default 20)',
  ).action(async (options: ListOptions, command: Command) => {
    const client = context.client(command, 'signed')
    const query = { status: options.status as BacktestJob['status'] | undefined, template_id: options.template, from: options.from, to: options.to, limit: options.limit }
    await printList(
      context.output,
      options,
      { page: (cursor) => client.backtests.list({ ...query, cursor }), all: () => client.backtests.iterate(query) },
      async (jobs) => printJobList(context.output, jobs, await templateNames(client, jobs.map((job) => job.config.template_id))),
      'perpetua backtest list',
    )
  })

  backtest
    .command('show')
    .description('one backtest: its configuration, status and metrics')
    .argument('<id>', 'job id (bt_…)')
    .option('--trades', 'also list the closed trades')
    .option('--json', "print the API's job exactly (GET /v1/backtest/jobs/{id}: with equity_curve and trades)")
    .action(async (id: string, options: { trades?: boolean; json?: boolean }, command: Command) => {
      const client = context.client(command, 'signed')
      const job = await readJob(context, client, id)
      if (options.json) return printJson(context.output, job)
      printJob(context.output, job, await templateNames(client, [job.config.template_id]), options.trades ? await pricesOf(context, command, job.config.symbols) : undefined)
    })

  backtest
    .command('cancel')
    .description('cancel a queued or running backtest')
    .argument('<id>', 'job id (bt_…)')
    .option('--reason <text>', 'why, kept for audit (at most 200 characters)')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { reason?: string; json?: boolean }, command: Command) => {
      const job = await context.client(command, 'signed').backtests.cancel(id, options.reason)
      if (options.json) return printJson(context.output, job)
      context.output.out(`${job.id} ${job.status} at ${percent(job.progress, 0)}`)
    })

  return backtest
}

interface RunOptions extends ConfigFlags {
  file?: string
  detach?: boolean
  json?: boolean
}

interface ListOptions extends ListFlags {
  status?: string
  template?: string
  from?: string
  to?: string
}
