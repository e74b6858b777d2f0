import crypto from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Account, accountPayload, balancePayload } from './accounts.js'
import { BinanceError, invalidData, mandatory } from '../common/errors.js'
import { integer, type Query, required } from '../common/params.js'
import type { WeightLimiter } from '../common/rate-limit.js'

export interface UserDataDeps {
  accounts: Map<string, Account>
  limiter: WeightLimiter
  /** The exchange's real clock: signed requests are timed against it or against the replayed market time. */
  wallNow: () => number
  /** The replayed market time that /fapi/v1/time reports: clients that sync to it sign with it. */
  replayNow: () => number
  /** When the accounts' balances were set (the exchange's start), their updateTime. */
  fundedAt: number
}

const DEFAULT_RECV_WINDOW = 5000
const MAX_RECV_WINDOW = 60_000
/** Binance refuses a timestamp this far ahead of its clock or more. */
const AHEAD_LIMIT_MS = 1000

/**
 * The USER_DATA endpoints, SIGNED as on Binance: the API key in X-MBX-APIKEY, `timestamp` (and
 * optional `recvWindow`, default 5000, at most 60000) in the query, and `signature` = hex
 * HMAC-SHA256(secret, the query string exactly as sent without the signature parameter). Checked in
 * this order: weight, key (-2014 missing, -2015 unknown), parameters (-1102, -1100, -1130), time
 * (-1021), signature (-1022).
 */
export function userDataRoutes(app: FastifyInstance, deps: UserDataDeps): void {
  const signed = (path: string, weight: number, payload: (account: Account) => unknown) => {
    app.get(path, async (request, reply) => {
      const used = deps.limiter.charge(request.ip, weight)
      reply.header('x-mbx-used-weight-1m', String(used))
      return payload(authenticate(request, deps))
    })
  }
  signed('/fapi/v2/account', 5, (account) => accountPayload(account, deps.fundedAt))
  signed('/fapi/v2/balance', 5, (account) => balancePayload(account, deps.fundedAt))
}

function authenticate(request: FastifyRequest, deps: UserDataDeps): Account {
  const apiKey = request.headers['x-mbx-apikey']
  if (typeof apiKey !== 'string' || apiKey === '') throw new BinanceError(401, -2014, 'API-key format invalid.')
  const account = deps.accounts.get(apiKey)
  if (!account) throw new BinanceError(401, -2015, `Invalid API-key, IP, or permissions for action, request ip: ${request.ip}`)
  const query = request.query as Query
  const timestamp = integer(query, 'timestamp')
  if (timestamp === undefined) throw mandatory('timestamp')
  const recvWindow = integer(query, 'recvWindow') ?? DEFAULT_RECV_WINDOW
  if (recvWindow <= 0 || recvWindow > MAX_RECV_WINDOW) throw invalidData('recvWindow')
  const signature = required(query, 'signature')
  checkTimestamp(timestamp, recvWindow, deps)
  const expected = crypto.createHmac('sha256', account.secretKey).update(unsignedQuery(request.url)).digest()
  // HMAC signatures are compared case-insensitively, as Binance does.
  const presented = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : undefined
  if (!presented || !crypto.timingSafeEqual(expected, presented)) throw new BinanceError(400, -1022, 'Signature for this request is not valid.')
  return account
}

/**
 * Binance's window (less than 1000 ms ahead, at most recvWindow behind), held against either clock:
 * a client that signs with its own clock meets the wall clock, and ccxt or `binance` with clock sync
 * on meet the replay clock, because they offset their clock by GET /fapi/v1/time, which reports the
 * replayed market time. The error names the wall clock, the one a client without sync is judged by.
 */
function checkTimestamp(timestamp: number, recvWindow: number, deps: UserDataDeps): void {
  const within = (serverTime: number) => timestamp < serverTime + AHEAD_LIMIT_MS && serverTime - timestamp <= recvWindow
  const wall = deps.wallNow()
  if (within(wall) || within(deps.replayNow())) return
  if (timestamp >= wall + AHEAD_LIMIT_MS) {
    throw new BinanceError(400, -1021, `Timestamp for this request was ${AHEAD_LIMIT_MS}ms ahead of the server's time.`)
  }
  throw new BinanceError(400, -1021, 'Timestamp for this request is outside of the recvWindow.')
}

/** The raw query string as sent, minus the signature parameter: what the client signed. */
function unsignedQuery(url: string): string {
  const question = url.indexOf('?')
  if (question < 0) return ''
  return url
    .slice(question + 1)
    .split('&')
    .filter((part) => !part.startsWith('signature='))
    .join('&')
}
