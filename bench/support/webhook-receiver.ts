import { startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../../test/support/https-receiver.js'

/**
 * The receiving end of the webhooks bench, in its own process so its CPU is not the service's:
 * a real HTTPS server (test CA) where each webhook has its own path, that verifies every signature
 * with that webhook's secret and notes, per delivery, the time from the event (its data.sent_ms, the
 * producer's clock before the event's transaction) to receipt. Talks to the bench over IPC:
 * {secrets: {path: secret}}, {reset}, {report, detail?} (the tallies and the receiver's CPU time since
 * the last reset; each delivery's figures with detail), {stop}.
 */
interface Tally {
  received: number
  /** `path event-id`: one delivery of one event to one webhook. */
  unique: Set<string>
  badSignatures: number
  latenciesMs: number[]
  /** [data.seq, receipt time] of each first receipt that carries a seq. */
  receipts: Array<[number, number]>
  /** This process's CPU time (user + system) at the reset. */
  cpuAtReset: number
}

const cpuUs = () => {
  const { user, system } = process.cpuUsage()
  return user + system
}
const fresh = (): Tally => ({ received: 0, unique: new Set(), badSignatures: 0, latenciesMs: [], receipts: [], cpuAtReset: cpuUs() })
let tally = fresh()
let secrets: Record<string, string> = {}

const receiver = await startHttpsReceiver({
  record: false, // the bench sends tens of thousands
  answer: (request) => {
    tally.received += 1
    if (!verifyStandardWebhook(secrets[request.path] ?? '', request.headers, request.body)) tally.badSignatures += 1
    const event = JSON.parse(request.body) as { id: string; data: { sent_ms?: number; seq?: number } }
    const key = `${request.path} ${event.id}`
    if (!tally.unique.has(key)) {
      tally.unique.add(key)
      if (typeof event.data.sent_ms === 'number') tally.latenciesMs.push(request.at - event.data.sent_ms)
      if (typeof event.data.seq === 'number') tally.receipts.push([event.data.seq, request.at])
    }
    return { status: 204 }
  },
})

process.on('message', (message: { secrets?: Record<string, string>; report?: true; detail?: true; reset?: true; stop?: true }) => {
  if (message.secrets !== undefined) secrets = message.secrets
  if (message.reset) tally = fresh()
  if (message.report) {
    process.send!({
      received: tally.received,
      unique: tally.unique.size,
      badSignatures: tally.badSignatures,
      // The per-delivery figures only when asked: the bench polls the counts every 20 ms.
      latenciesMs: message.detail ? tally.latenciesMs : [],
      receipts: message.detail ? tally.receipts : [],
      cpuUs: cpuUs() - tally.cpuAtReset,
    })
  }
  if (message.stop) void receiver.close().then(() => process.exit(0))
})
process.send!({ url: receiver.url, caFile: testCertificates().caFile })
