import type { VerificationStatus } from '../db/schema.js'
import { REQUEST_DEADLINE_MS } from '../market/market-data.js'
import { isUpstreamUnavailable, type UpstreamClient } from '../market/upstream-client.js'
import { binanceError } from '../trading/binance/answer.js'
import { signedQuery } from './binance-signer.js'

/** The signed endpoint a key is checked against: USD-M account information (USER_DATA, weight 5). */
export const ACCOUNT_PATH = '/fapi/v2/account'
const ACCOUNT_WEIGHT = 5

/**
 * Binance codes that mean the key itself is refused: -2014 API-key format invalid, -2015 invalid
 * API-key, IP, or permissions, -1022 signature not valid (a wrong secret), -2008 invalid API-key id.
 * Anything else the exchange answers (-1021 our clock, -1003 limits, a 5xx) says nothing about the
 * key, so the check stays pending rather than marking a good key failed.
 */
const KEY_REFUSED = new Set([-2014, -2015, -1022, -2008])

export interface Verification {
  status: VerificationStatus
  /** Binance's error code, when the exchange answered with one. */
  code: number | null
  /** Binance's message, or why no answer came; null when verified. */
  message: string | null
}

/** Checks a key pair by one SIGNED call to the exchange's account endpoint. Never throws for the exchange's answers. */
export async function verifyExchangeKey(client: UpstreamClient, credentials: { apiKey: string; apiSecret: string }, now: number): Promise<Verification> {
  let response
  try {
    response = await client.get(
      {
        host: 'api',
        path: ACCOUNT_PATH,
        query: signedQuery(credentials.apiSecret, {}, now),
        weight: ACCOUNT_WEIGHT,
        headers: { 'x-mbx-apikey': credentials.apiKey },
      },
      performance.now() + REQUEST_DEADLINE_MS,
    )
  } catch (error) {
    if (isUpstreamUnavailable(error)) return { status: 'pending', code: null, message: error.message }
    throw error
  }
  if (response.status === 200 && isAccount(response.body)) return { status: 'verified', code: null, message: null }
  const problem = refusal(response.body)
  if (problem && KEY_REFUSED.has(problem.code)) return { status: 'failed', code: problem.code, message: problem.msg }
  return {
    status: 'pending',
    code: problem?.code ?? null,
    message: problem ? problem.msg : `the exchange answered ${response.status} without a verdict on the key`,
  }
}

function isAccount(body: string): boolean {
  const value = parse(body) as { assets?: unknown } | undefined
  return typeof value === 'object' && value !== null && Array.isArray(value.assets)
}

function refusal(body: string): { code: number; msg: string } | undefined {
  const error = binanceError(parse(body))
  // Stored as text: drop what PostgreSQL cannot hold (NUL, unpaired surrogates).
  return error && { code: error.code, msg: error.msg.replace(/\u0000|[\ud800-\udfff]/g, '') }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
