import { type Credentials, credentials } from './session.js'

/** An answer other than 2xx, with the message the API gave (the /v1 envelope or the public `detail`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly field: string | undefined,
    /** Seconds, from Retry-After on a 429. */
    readonly retryAfter: number | undefined,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

type Query = Record<string, string | number | boolean | undefined | null>

/** `path?query` with the undefined and null values left out; the exact request target that is sent (and signed). */
export function target(path: string, query: Query = {}): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
  const search = params.toString()
  return search ? `${path}?${search}` : path
}

/**
 * Headers that authenticate one request. The app token needs no signing; an API key and secret sign
 * with HMAC-SHA256 over timestamp + METHOD + path_with_query + body (README) — that is the typed
 * client's job (src/client/), which this module uses once it has landed.
 */
async function authHeaders(who: Credentials | null, method: string, pathWithQuery: string, body: string): Promise<Record<string, string>> {
  if (!who) return {}
  if (who.kind === 'token') return { authorization: `Bearer ${who.token}` }
  void method
  void pathWithQuery
  void body
  throw new ApiError(0, 'UNSUPPORTED', 'signing in with an API key and secret needs the typed client, which is not in this build yet; use an app token', undefined, undefined)
}

/**
 * One request to the API on this origin, as the signed-in user (or as `as`: sign-in checks its
 * candidate before keeping it); JSON in and out; throws ApiError for any non-2xx answer.
 */
export async function request<T>(method: string, pathWithQuery: string, body?: unknown, as: Credentials | null = credentials()): Promise<T> {
  const text = body === undefined ? '' : JSON.stringify(body)
  const headers: Record<string, string> = { ...(await authHeaders(as, method, pathWithQuery, text)) }
  if (text) headers['content-type'] = 'application/json'
  const response = await fetch(pathWithQuery, { method, headers, ...(text ? { body: text } : {}) })
  if (response.status === 204) return undefined as T
  const raw = await response.text()
  const parsed = raw ? safeJson(raw) : undefined
  if (!response.ok) throw errorOf(response, parsed, raw)
  return parsed as T
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}

function errorOf(response: Response, parsed: unknown, raw: string): ApiError {
  const retryAfter = Number(response.headers.get('retry-after') ?? NaN)
  const seconds = Number.isFinite(retryAfter) ? retryAfter : undefined
  const envelope = (parsed as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error
  if (envelope?.message) return new ApiError(response.status, envelope.code, envelope.message, envelope.field, seconds)
  const detail = (parsed as { detail?: unknown } | undefined)?.detail
  if (typeof detail === 'string') return new ApiError(response.status, undefined, detail, undefined, seconds)
  if (Array.isArray(detail)) {
    const first = detail[0] as { loc?: unknown[]; msg?: string } | undefined
    return new ApiError(response.status, undefined, `${(first?.loc ?? []).join('.')}: ${first?.msg ?? 'invalid'}`, undefined, seconds)
  }
  return new ApiError(response.status, undefined, raw.slice(0, 200) || `HTTP ${response.status}`, undefined, seconds)
}
