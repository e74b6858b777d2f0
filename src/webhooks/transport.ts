import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import net from 'node:net'
import tls from 'node:tls'
import { Agent, request } from 'undici'
import { forbiddenAddressReason } from './address-policy.js'

/** The outcome of one POST to a webhook receiver; failures are values, never exceptions. */
export interface AttemptResult {
  delivered: boolean
  /** The receiver's HTTP status; null when it never answered (refused, TLS, timeout, refused address). */
  status: number | null
  /** Milliseconds from sending to the response headers; null without an answer. */
  timeMs: number | null
  /** What went wrong, for the API and the deliveries log; null on success. */
  error: string | null
}

export interface TransportOptions {
  /** Skip the address checks (tests reach receivers on 127.0.0.1). */
  allowPrivateHosts: boolean
  /** The whole attempt, connect to response headers (DESIGN §5: 10 s). */
  timeoutMs?: number
  /**
   * Extra trusted CA certificates (PEM), added to Node's roots. Production uses NODE_EXTRA_CA_CERTS,
   * which Node reads at start; tests make their CA after start and pass it here.
   */
  ca?: string[]
}

const DEFAULT_TIMEOUT_MS = 10_000
/** A receiver's answer body is read and dropped; past this many bytes the connection is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024

class RefusedAddressError extends Error {
  readonly code = 'PERPETUA_REFUSED_ADDRESS'
}

/**
 * Sends webhook deliveries: keep-alive connections, certificates verified, redirects never followed
 * (a 3xx is a failure), and every address vetted at connect time: the host is resolved, each address
 * checked, and the socket connects to the vetted address (a DNS answer that changed since create
 * cannot reach a private network).
 */
export class WebhookTransport {
  private readonly agent: Agent
  private readonly timeoutMs: number
  private readonly allowPrivateHosts: boolean

  constructor(options: TransportOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.allowPrivateHosts = options.allowPrivateHosts
    this.agent = new Agent({
      connect: {
        timeout: this.timeoutMs,
        ...(options.allowPrivateHosts ? {} : { lookup: vettedLookup }),
        // One context for every connection: given `ca`, tls.connect builds a new context per
        // connection and parses Node's ~150 roots again (addCACerts was a tenth of the webhooks
        // bench's CPU).
        ...(options.ca ? { secureContext: tls.createSecureContext({ ca: [...tls.rootCertificates, ...options.ca] }) } : {}),
      },
      keepAliveTimeout: 30_000,
    })
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const refused = this.refusedLiteral(url)
    if (refused) return failure(refused)
    const started = performance.now()
    const signal = AbortSignal.timeout(this.timeoutMs)
    try {
      const response = await request(url, { method: 'POST', headers, body, dispatcher: this.agent, signal })
      const timeMs = Math.round(performance.now() - started)
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => undefined)
      const status = response.statusCode
      if (status >= 200 && status < 300) return { delivered: true, status, timeMs, error: null }
      const error = status >= 300 && status < 400 ? `the receiver redirected (HTTP ${status}); redirects are not followed` : `the receiver answered HTTP ${status}`
      return { delivered: false, status, timeMs, error }
    } catch (error) {
      return failure(signal.aborted ? `no answer within ${this.timeoutMs / 1000} s` : describe(error))
    }
  }

  close(): Promise<void> {
    return this.agent.close()
  }

  /** Literal IP hosts skip DNS, so the connect-time lookup never sees them: check them here. */
  private refusedLiteral(url: string): string | undefined {
    if (this.allowPrivateHosts) return undefined
    let host: string
    try {
      host = new URL(url).hostname.replace(/^\[|\]$/g, '')
    } catch {
      return 'the webhook url is not a valid URL'
    }
    if (net.isIP(host) === 0) return undefined
    const reason = forbiddenAddressReason(host)
    return reason && `refused to connect to ${host}: ${reason}${PRIVATE_HOSTS_HINT}`
  }
}

/** Delivery records name the server setting that allows a receiver on this machine or a private network. */
const PRIVATE_HOSTS_HINT = ' (WEBHOOK_ALLOW_PRIVATE_HOSTS=true on the server allows it)'

/** dns.lookup for the connector: resolves every address and refuses the host if any is not public. */
const vettedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { all: true, verbatim: true, family: options.family ?? 0 }, (error, records) => {
    if (error) return callback(error, '', 0)
    const refused = records.map((record) => ({ record, reason: forbiddenAddressReason(record.address) })).find((entry) => entry.reason)
    if (refused) {
      return callback(new RefusedAddressError(`refused to connect to ${hostname} (${refused.record.address}): ${refused.reason}${PRIVATE_HOSTS_HINT}`), '', 0)
    }
    if (options.all) return (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, records)
    const [first] = records
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0)
    callback(null, first.address, first.family)
  })
}

function failure(error: string): AttemptResult {
  return { delivered: false, status: null, timeMs: null, error }
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/** A message for the API: what failed, never a stack or internal detail. */
function describe(error: unknown): string {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = err.code ?? err.cause?.code
  const refused = [error, err.cause].find((e) => e instanceof RefusedAddressError)
  if (refused) return refused.message
  if (code && TLS_CODES.has(code)) return `the receiver's TLS certificate was not accepted (${code})`
  if (code === 'ECONNREFUSED') return 'the receiver refused the connection'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the receiver host does not resolve'
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'the connection to the receiver timed out'
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the receiver closed the connection'
  return `the delivery failed${code ? ` (${code})` : ''}`
}
