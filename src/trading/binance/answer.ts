/**
 * What an exchange call came to. Binance's general info (USD-M, HTTP return codes) tells three kinds
 * apart, and an order path must too: a definitive refusal (nothing happened), a failure before
 * execution (nothing happened, may be sent again), and an UNKNOWN outcome that "could have been a
 * success" (503 "Unknown error…", -1006, -1007, 408, a connection lost after sending), which must be
 * looked up and never assumed either way.
 */
export type ExchangeAnswer<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'rejected'; status: number; code: number; msg: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'unknown'; reason: string }

/** Binance codes whose execution status is unknown: -1000 unknown error, -1006 unexpected response, -1007 timeout. */
const UNKNOWN_CODES = new Set([-1000, -1006, -1007])
/** 5xx messages Binance documents as failures before execution (safe to resend). */
const FAILED_5XX = [/^Service Unavailable\.?$/i, /^Internal error; unable to process your request\. Please try again\.?$/i]

/** Classifies one HTTP answer of the exchange. */
export function classifyAnswer<T>(status: number, body: string): ExchangeAnswer<T> {
  const parsed = parseJson(body)
  const error = binanceError(parsed)
  if (status >= 200 && status < 300) {
    if (parsed === undefined) return { kind: 'unknown', reason: 'the exchange answered 2xx with a body that is not JSON' }
    if (error && error.code !== 200) return classifyError(status, error)
    return { kind: 'ok', value: parsed as T }
  }
  if (status === 408) return { kind: 'unknown', reason: 'the exchange timed out waiting for its back end (408)' }
  if (status >= 500) {
    const msg = error?.msg ?? ''
    if (FAILED_5XX.some((pattern) => pattern.test(msg))) return { kind: 'unavailable', reason: `the exchange answered ${status}: ${msg}` }
    return { kind: 'unknown', reason: `the exchange answered ${status}${msg ? `: ${msg}` : ''}; the execution status is unknown` }
  }
  if (error) return classifyError(status, error)
  return { kind: 'unavailable', reason: `the exchange answered ${status} without a Binance error body` }
}

function classifyError<T>(status: number, error: { code: number; msg: string }): ExchangeAnswer<T> {
  if (UNKNOWN_CODES.has(error.code)) return { kind: 'unknown', reason: `${error.code} ${error.msg}` }
  return { kind: 'rejected', status, code: error.code, msg: error.msg }
}

/** Binance's `{code, msg}`, bounded so a hostile upstream cannot hand us megabytes of message. */
export function binanceError(value: unknown): { code: number; msg: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { code, msg } = value as { code?: unknown; msg?: unknown }
  if (typeof code !== 'number' || !Number.isInteger(code) || Math.abs(code) >= 2 ** 31 || typeof msg !== 'string') return undefined
  return { code, msg: msg.slice(0, 500) }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
