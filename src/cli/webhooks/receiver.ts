import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, type WebhookEvent } from '../../client/webhook-verification.js'

/** One request the listener received, checked. */
export interface ReceivedDelivery {
  /** webhook-id (the event id), else the body's id. */
  id: string | undefined
  type: string | undefined
  /** The event's timestamp (ISO 8601), else webhook-timestamp as ISO, else when it arrived. */
  time: string
  /** true: a v1 signature matches the secret; false: none does (`problem` says why); undefined: no secret to check with. */
  verified: boolean | undefined
  problem: string | undefined
  /** The event's data, or the raw body when it is not JSON. */
  payload: unknown
}

export interface Receiver {
  url: string
  port: number
  close(): Promise<void>
}

const MAX_BODY_BYTES = 1024 * 1024

/**
 * A local HTTPS receiver: each POST is checked against the webhook's secret (Standard Webhooks) and
 * handed to `onDelivery`. It answers 200 to a verified (or unchecked) delivery and 400 to one whose
 * signature does not verify, as a real receiver should, so the server's delivery log shows the same.
 */
export async function startReceiver(options: { host: string; port: number; cert: string; key: string; secret: () => string | undefined; onDelivery: (delivery: ReceivedDelivery) => void }): Promise<Receiver> {
  const server = https.createServer({ cert: options.cert, key: options.key }, (request, response) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        if (response.headersSent) return
        response.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end('{"error":"body over 1 MiB"}')
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) return
      void check(options.secret(), request.headers, Buffer.concat(chunks)).then((delivery) => {
        options.onDelivery(delivery)
        const ok = delivery.verified !== false
        response.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { received: true } : { error: delivery.problem }))
      })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `https://${options.host}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

async function check(secret: string | undefined, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<ReceivedDelivery> {
  const text = body.toString('utf8')
  let event: Partial<WebhookEvent> | undefined
  try {
    event = JSON.parse(text) as Partial<WebhookEvent>
  } catch {
    event = undefined
  }
  const header = (name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : undefined)
  const seconds = Number(header('webhook-timestamp'))
  const time = typeof event?.timestamp === 'string' ? event.timestamp : Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : new Date().toISOString()
  const base = {
    id: header('webhook-id') ?? (typeof event?.id === 'string' ? event.id : undefined),
    type: typeof event?.type === 'string' ? event.type : undefined,
    time,
    payload: event === undefined ? text : event.data,
  }
  if (secret === undefined) return { ...base, verified: undefined, problem: undefined }
  try {
    await verifyWebhook(secret, headers, body)
    return { ...base, verified: true, problem: undefined }
  } catch (error) {
    return { ...base, verified: false, problem: error instanceof Error ? error.message : String(error) }
  }
}

/** One line: time, type, id, the verdict, the payload as compact JSON (cut at `width` characters). */
export function deliveryLine(delivery: ReceivedDelivery, width = 200): string {
  const verdict = delivery.verified === true ? 'signature verified' : delivery.verified === false ? `signature NOT verified (${delivery.problem})` : 'signature not checked (no secret: --secret)'
  const payload = typeof delivery.payload === 'string' ? delivery.payload : JSON.stringify(delivery.payload ?? null)
  const cut = payload.length > width ? `${payload.slice(0, width - 1)}…` : payload
  const time = delivery.time.replace(/\.\d{3}Z$/, 'Z')
  return `${time} ${delivery.type ?? '(no type)'} ${delivery.id ?? '(no id)'} ${verdict} ${cut}`
}
