import path from 'node:path'
import type { Command } from 'commander'
import { PerpetuaError } from '../../client/errors.js'
import type { PerpetuaClient } from '../../client/perpetua-client.js'
import { loadClientEnvironment } from '../../config.js'
import { describeApiError, UsageError } from '../cli-errors.js'
import type { CliContext } from '../context.js'
import type { Output } from '../output.js'
import { list, port } from '../parse.js'
import { portTaken } from '../port-taken.js'
import { deliveryLine, startReceiver } from './receiver.js'
import { listenCertificate } from './self-signed.js'

/** Marks the webhooks this command creates: one left by a listen that was killed is replaced, never someone else's. */
const LISTEN_DESCRIPTION = 'perpetua webhooks listen (deleted when it stops)'
const DEFAULT_PORT = 9443

interface ListenOptions {
  port: number
  events?: string[]
  webhook?: string
  secret?: string
  certDir?: string
  json?: boolean
}

/** `perpetua webhooks listen`: a receiver on this machine, subscribed, checked and printed (docs/decisions/dashboard-and-cli.md, "The CLI for a new user (issue 24)"). */
export function addListenCommand(webhooks: Command, context: CliContext): void {
  webhooks
    .command('listen')
    .description('a local HTTPS receiver: subscribes it, then prints each delivery and whether its signature verifies')
    .option('--port <port>', `listen on 127.0.0.1 at this port (0: any free port)`, port, DEFAULT_PORT)
    .option('--events <list>', 'events to subscribe, comma-separated or repeated (default *: all)', list)
    .option('--webhook <id>', "use this webhook (wh_…) instead of creating one; it is not deleted at the end")
    .option('--secret <secret>', 'with --webhook: its signing secret, to verify deliveries (default PERPETUA_WEBHOOK_SECRET)')
    .option('--cert-dir <dir>', 'where the certificate is kept (default ~/.config/perpetua/webhooks-listen)')
    .option('--json', 'print each delivery as one JSON line: {id, type, time, verified, problem, payload}')
    .addHelpText(
      'after',
      '\nMakes a self-signed certificate for 127.0.0.1 once (kept in --cert-dir), listens, creates a webhook for\n' +
        'https://127.0.0.1:PORT/ and sends it a test event. The server must accept a loopback receiver and trust the\n' +
        'certificate: start perpetua serve with WEBHOOK_ALLOW_PRIVATE_HOSTS=true WEBHOOK_CA_FILE=<the cert.pem it\n' +
        'prints>. Deliveries go to stdout; a delivery whose signature does not verify is answered 400. Ctrl-C stops\n' +
        'and deletes the webhook it created.',
    )
    .action(async (options: ListenOptions, command: Command) => {
      const client = context.client(command, 'signed')
      const out = context.output
      // Taken first, so a Ctrl-C during the set-up still ends in the clean-up below rather than killing the process.
      const stop = context.interrupted()
      const environment = loadClientEnvironment()
      const certDir = path.resolve(options.certDir ?? path.join(environment.configDir, 'webhooks-listen'))
      const certificate = listenCertificate(certDir)
      if (options.secret !== undefined && options.webhook === undefined) throw new UsageError('--secret goes with --webhook: a webhook this command creates brings its own secret')
      let secret = options.webhook === undefined ? undefined : (options.secret ?? environment.webhookSecret)
      const receiver = await startReceiver({
        host: '127.0.0.1',
        port: options.port,
        cert: certificate.cert,
        key: certificate.key,
        secret: () => secret,
        onDelivery: (delivery) => out.out(options.json ? JSON.stringify(delivery) : deliveryLine(delivery)),
      }).catch((error: unknown) => {
        throw portTaken(error, 'webhooks listen', 'choose another with --port (0: any free port)')
      })
      const setup = `WEBHOOK_ALLOW_PRIVATE_HOSTS=true WEBHOOK_CA_FILE=${certificate.certFile}`
      if (certificate.created) {
        out.err(`made a self-signed certificate for 127.0.0.1 in ${certificate.certFile}; the server must be started (once) with\n  ${setup}`)
      }
      let subscription: { id: string; created: boolean } | undefined
      try {
        const subscribed = await subscribe(client, out, receiver.url, options, setup, secret !== undefined)
        subscription = subscribed
        secret ??= subscribed.secret
        await handshake(client, out, subscribed.id, receiver.url, setup)
        out.err(`listening on ${receiver.url} for ${subscribed.id}; Ctrl-C stops${subscribed.created ? ` and deletes ${subscribed.id}` : ''}`)
        if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }))
      } finally {
        if (subscription?.created) await client.webhooks.delete(subscription.id).then(
          () => out.err(`deleted ${subscription!.id}`),
          (error: unknown) => out.err(`could not delete ${subscription!.id}: ${error instanceof PerpetuaError ? describeApiError(error) : String(error)}`),
        )
        await receiver.close()
      }
    })
}

/** The webhook deliveries come through: --webhook's, or one made for this listener (a leftover of an earlier listen replaced). */
async function subscribe(client: PerpetuaClient, out: Output, url: string, options: ListenOptions, setup: string, hasSecret: boolean): Promise<{ id: string; secret: string | undefined; created: boolean }> {
  if (options.webhook !== undefined) {
    const webhook = await client.webhooks.get(options.webhook)
    if (webhook.url !== url) out.err(`note: ${webhook.id} delivers to ${webhook.url}, not to this listener (${url})`)
    if (!hasSecret) out.err(`note: no --secret (nor PERPETUA_WEBHOOK_SECRET), so signatures are not checked`)
    return { id: webhook.id, secret: undefined, created: false }
  }
  const create = () => client.webhooks.create({ url, events: (options.events ?? ['*']) as never, description: LISTEN_DESCRIPTION })
  try {
    const created = await create()
    return { id: created.id, secret: created.secret, created: true }
  } catch (error) {
    if (!(error instanceof PerpetuaError)) throw error
    if (error.code === 'DUPLICATE_URL') {
      let existing: { id: string; description?: string | null } | undefined
      for await (const webhook of client.webhooks.iterate()) if (webhook.url === url) existing = webhook
      if (existing?.description !== LISTEN_DESCRIPTION) {
        throw new UsageError(`${existing?.id ?? 'a webhook'} already delivers to ${url}: listen with --webhook ${existing?.id ?? 'ID'} --secret SECRET, or choose another --port`)
      }
      await client.webhooks.delete(existing.id)
      out.err(`deleted ${existing.id}, left for ${url} by an earlier listen`)
      const created = await create()
      return { id: created.id, secret: created.secret, created: true }
    }
    if (error.status === 400 && error.field === 'url') {
      throw new UsageError(`${describeApiError(error)}\nthe server must accept loopback receivers: start perpetua serve with ${setup}`)
    }
    throw error
  }
}

/** A test event through the server's real pipeline: shows at once whether the server reaches and trusts this listener. */
async function handshake(client: PerpetuaClient, out: Output, id: string, url: string, setup: string): Promise<void> {
  const result = await client.webhooks.test(id)
  if (result.delivered) return
  out.err(
    `the server could not deliver ${id}'s test event to ${url}: ${result.error ?? `HTTP ${result.response_status}`}\n` +
      `start perpetua serve with ${setup} (then restart this listen, or send another test: perpetua webhooks test ${id})`,
  )
}
