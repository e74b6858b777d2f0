import { Command, Option } from 'commander'
import type { Webhook, WebhookCreate } from '../../client/operations.js'
import { CommandFailed } from '../cli-errors.js'
import type { CliContext } from '../context.js'
import { type ListFlags, printList, withListFlags } from '../list-command.js'
import { fieldTable, NONE, type Output, printJson, table, time } from '../output.js'
import { bodyFrom, list } from '../parse.js'
import { addListenCommand } from './listen.js'

/** `perpetua webhooks list|create|test|listen`. */
export function webhooksCommand(context: CliContext): Command {
  const webhooks = new Command('webhooks').description('your webhook subscriptions (signed: scopes webhooks:read, webhooks:write)')

  withListFlags(
    webhooks
      .command('list')
      .description('your webhooks, without their secrets')
      .addOption(new Option('--status <status>', 'only webhooks in this status').choices(['active', 'paused', 'broken']))
      .option('--event <type>', 'only webhooks that receive this event (a wildcard subscription matches its group)'),
    'webhooks',
    ', 1 to 100 (default 25)',
  ).action(async (options: ListFlags & { status?: Webhook['status']; event?: string }, command: Command) => {
    const client = context.client(command, 'signed')
    const query = { status: options.status, event: options.event, limit: options.limit }
    await printList(
      context.output,
      options,
      { page: (cursor) => client.webhooks.list({ ...query, cursor }), all: () => client.webhooks.iterate(query) },
      (items) => printWebhookList(context.output, items),
      'perpetua webhooks list',
    )
  })

  webhooks
    .command('create')
    .description('subscribe an https URL to events; prints the signing secret, shown this once')
    .option('--file <file>', 'the request body as JSON (- reads stdin); the flags below override its fields')
    .option('--url <url>', 'the receiver, https:// with a valid certificate')
    .option('--events <list>', 'event types or wildcards, comma-separated or repeated, e.g. strategy.*,backtest.job_done', list)
    .option('--description <text>', 'at most 200 characters')
    .option('--balance-low-threshold <decimal>', 'needed with account.balance_low: fire below this available balance')
    .option('--json', "print the API's answer exactly (with secret)")
    .action(async (options: { file?: string; url?: string; events?: string[]; description?: string; balanceLowThreshold?: string; json?: boolean }, command: Command) => {
      const client = context.client(command, 'signed')
      const body = bodyFrom(options.file, { url: options.url, events: options.events, description: options.description, balance_low_threshold: options.balanceLowThreshold }, {}) as WebhookCreate
      const created = await client.webhooks.create(body)
      if (options.json) return printJson(context.output, created)
      context.output.out(
        fieldTable([
          ['id', created.id],
          ['url', created.url],
          ['events', created.events.join(',')],
          ['status', created.status],
          ['secret', created.secret],
        ]),
      )
      context.output.err(`the secret is shown only now: keep it to verify deliveries (Standard Webhooks)`)
    })

  webhooks
    .command('test')
    .description('send a test event through the delivery pipeline and report how the receiver answered (exit 1 when not delivered)')
    .argument('<id>', 'webhook id (wh_…)')
    .option('--event-type <type>', 'the event to imitate (default webhook.test)')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { eventType?: string; json?: boolean }, command: Command) => {
      const result = await context.client(command, 'signed').webhooks.test(id, options.eventType)
      if (options.json) printJson(context.output, result)
      else
        context.output.out(
          result.delivered
            ? `${result.test_event_id} delivered: HTTP ${result.response_status} in ${result.response_time_ms} ms`
            : `${result.test_event_id} not delivered: ${result.error ?? 'no reason given'}${result.response_status === null ? '' : ` (HTTP ${result.response_status})`}`,
        )
      if (!result.delivered) throw new CommandFailed(`the receiver of ${id} did not accept the test event`)
    })

  addListenCommand(webhooks, context)
  return webhooks
}

function printWebhookList(output: Output, webhooks: Webhook[]): void {
  if (webhooks.length === 0) return output.err('no webhooks')
  output.out(
    table(
      ['id', 'url', 'events', 'status', 'failures', 'last delivery', 'last success', 'description'],
      webhooks.map((w) => [w.id, w.url, w.events.join(','), w.status, w.consecutive_failures, time(w.last_delivery_at), time(w.last_success_at), w.description ?? NONE]),
    ),
  )
}
