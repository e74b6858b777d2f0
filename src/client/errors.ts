import type { ErrorCode } from './operations.js'

/**
 * Any refusal from Perpetua, in one shape whatever the route family answered: the `/v1` envelope
 * (`{"error": {code, message, request_id, field?}}`) or a public FastAPI body (`{"detail": …}`).
 * A request that never got an answer has status 0 and code NETWORK_ERROR.
 */
export class PerpetuaError extends Error {
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number
  /** The API's code (e.g. INVALID_PARAMETER), `HTTP_<status>` for public routes, or NETWORK_ERROR. */
  readonly code: ErrorCode | 'NETWORK_ERROR' | `HTTP_${number}`
  /** The request field at fault, when the API names one. */
  readonly field: string | undefined
  /** The request id (x-request-id) to quote when reporting a problem. */
  readonly request_id: string | undefined
  /** From Retry-After, when the answer carried one (429, some 502/503). */
  readonly retryAfterMs: number | undefined

  constructor(init: { status: number; code: PerpetuaError['code']; message: string; field?: string | undefined; request_id?: string | undefined; retryAfterMs?: number | undefined; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'PerpetuaError'
    this.status = init.status
    this.code = init.code
    this.field = init.field
    this.request_id = init.request_id
    this.retryAfterMs = init.retryAfterMs
  }
}

/** Reads an error answer into a PerpetuaError. */
export async function errorFromResponse(response: Response): Promise<PerpetuaError> {
  const text = await response.text()
  const retryAfterMs = retryAfter(response.headers.get('retry-after'))
  const requestId = response.headers.get('x-request-id') ?? undefined
  const base = { status: response.status, retryAfterMs, request_id: requestId }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return new PerpetuaError({ ...base, code: `HTTP_${response.status}`, message: text.trim() || `HTTP ${response.status}` })
  }
  const envelope = (body as { error?: { code?: string; message?: string; field?: string; request_id?: string } }).error
  if (envelope && typeof envelope === 'object' && typeof envelope.code === 'string') {
    return new PerpetuaError({
      ...base,
      code: envelope.code as ErrorCode,
      message: envelope.message ?? envelope.code,
      field: envelope.field,
      request_id: envelope.request_id ?? requestId,
    })
  }
  const detail = (body as { detail?: unknown; msg?: unknown }).detail ?? (body as { msg?: unknown }).msg
  if (Array.isArray(detail) && detail.length > 0) {
    // FastAPI validation list: [{loc: ['body', 'name'], msg, type}]
    const first = detail[0] as { loc?: (string | number)[]; msg?: string }
    const field = (first.loc ?? []).slice(1).join('.') || undefined
    return new PerpetuaError({ ...base, code: `HTTP_${response.status}`, field, message: field ? `${field}: ${first.msg}` : String(first.msg) })
  }
  return new PerpetuaError({ ...base, code: `HTTP_${response.status}`, message: typeof detail === 'string' ? detail : text })
}

/** Retry-After in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
