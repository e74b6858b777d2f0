import crypto from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { BinanceError, invalidData, mandatory } from '../common/errors.js'
import { integer, type Query, required } from '../common/params.js'
import type { Account } from './accounts/account.js'

export interface SignedDeps {
  account: (apiKey: string) => Account | undefined
  /** The exchange's real clock: signed requests are timed against it or against the replayed market time. */
  wallNow: () => number
  /** The replayed market time that /fapi/v1/time reports: clients that sync to it sign with it. */
  replayNow: () => number
}

const DEFAULT_RECV_WINDOW = 5000
const MAX_RECV_WINDOW = 60_000
/** Binance refuses a timestamp this far ahead of its clock or more. */
const AHEAD_LIMIT_MS = 1000

/** The account of the X-MBX-APIKEY header: -2014 when missing, -2015 when unknown (USER_STREAM endpoints need no more). */
export function apiKeyAccount(request: FastifyRequest, deps: SignedDeps): Account {
  const apiKey = request.headers['x-mbx-apikey']
  if (typeof apiKey !== 'string' || apiKey === '') throw new BinanceError(401, -2014, 'API-key format invalid.')
  const account = deps.account(apiKey)
  if (!account) throw new BinanceError(401, -2015, `Invalid API-key, IP, or permissions for action, request ip: ${request.ip}`)
  return account
}

/**
 * A SIGNED (TRADE, USER_DATA) request as on Binance: the API key in X-MBX-APIKEY; parameters in
 * the query string, an application/x-www-form-urlencoded body, or both (the query wins a name sent
 * in both); `timestamp` and optional `recvWindow` (default 5000, at most 60000); `signature` = hex
 * HMAC-SHA256(secret, query string + body, exactly as sent, without the signature parameter).
 * Checked in this order: key (-2014 missing, -2015 unknown), parameters (-1102, -1100, -1130), time
 * (-1021), signature (-1022). Returns the account and the merged parameters.
 */
export function authenticate(request: FastifyRequest, deps: SignedDeps): { account: Account; params: Query } {
  const account = apiKeyAccount(request, deps)
  const body = typeof request.body === 'string' ? request.body : ''
  const params: Query = { ...parseForm(body), ...(request.query as Query) }
  const timestamp = integer(params, 'timestamp')
  if (timestamp === undefined) throw mandatory('timestamp')
  const recvWindow = integer(params, 'recvWindow') ?? DEFAULT_RECV_WINDOW
  if (recvWindow <= 0 || recvWindow > MAX_RECV_WINDOW) throw invalidData('recvWindow')
  const signature = required(params, 'signature')
  checkTimestamp(timestamp, recvWindow, deps)
  const question = request.url.indexOf('?')
  const total = withoutSignature(question < 0 ? '' : request.url.slice(question + 1)) + withoutSignature(body)
  const expected = crypto.createHmac('sha256', account.secretKey).update(total).digest()
  // HMAC signatures are compared case-insensitively, as Binance does.
  const presented = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : undefined
  if (!presented || !crypto.timingSafeEqual(expected, presented)) throw new BinanceError(400, -1022, 'Signature for this request is not valid.')
  return { account, params }
}

/**
 * Binance's window (less than 1000 ms ahead, at most recvWindow behind), held against either clock:
 * a client that signs with its own clock meets the wall clock, and ccxt or `binance` with clock sync
 * on meet the replay clock, because they offset their clock by GET /fapi/v1/time, which reports the
 * replayed market time. The error names the wall clock, the one a client without sync is judged by.
 */
function checkTimestamp(timestamp: number, recvWindow: number, deps: SignedDeps): void {
  const within = (serverTime: number) => timestamp < serverTime + AHEAD_LIMIT_MS && serverTime - timestamp <= recvWindow
  const wall = deps.wallNow()
  if (within(wall) || within(deps.replayNow())) return
  if (timestamp >= wall + AHEAD_LIMIT_MS) {
    throw new BinanceError(400, -1021, `Timestamp for this request was ${AHEAD_LIMIT_MS}ms ahead of the server's time.`)
  }
  throw new BinanceError(400, -1021, 'Timestamp for this request is outside of the recvWindow.')
}

/** Parameters of a form body; a name sent twice is kept as a list (which the readers refuse as malformed). */
function parseForm(body: string): Query {
  const out: Query = {}
  if (body === '') return out
  for (const [name, value] of new URLSearchParams(body)) {
    const previous = out[name]
    out[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value]
  }
  return out
}

/** The parameter string as sent, minus the signature parameter: what the client signed. */
function withoutSignature(params: string): string {
  if (!params.includes('signature=')) return params
  return params
    .split('&')
    .filter((part) => !part.startsWith('signature='))
    .join('&')
}
