import type { Checked, ParamProblem } from '../templates/types.js'

/** The closed set of error codes Perpetua answers with, and the status each one carries. */
export const ERROR_STATUS = {
  INVALID_PARAMETER: 400,
  UNKNOWN_SYMBOL: 400,
  NO_DATA: 400,
  UNAUTHENTICATED: 401,
  INVALID_SIGNATURE: 401,
  TIMESTAMP_EXPIRED: 401,
  INSUFFICIENT_FUNDS: 402,
  INSUFFICIENT_PERMISSION: 403,
  PLAN_REQUIRED: 403,
  NOT_FOUND: 404,
  INVALID_STATE: 409,
  DUPLICATE_URL: 409,
  DUPLICATE_KEY: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  LIMIT_REACHED: 429,
  INTERNAL: 500,
  UPSTREAM_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface AppErrorOptions {
  /** The request field at fault, e.g. "limit" or "params.fast". */
  field?: string
  /** Overrides the code's status, for the few places the spec pairs one code with another status. */
  status?: number
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>
}

/** The only error services throw; the error handler renders it per route family. */
export class AppError extends Error {
  readonly status: number
  readonly field: string | undefined
  readonly headers: Record<string, string>

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message)
    this.name = 'AppError'
    this.status = options.status ?? ERROR_STATUS[code]
    this.field = options.field
    this.headers = options.headers ?? {}
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)

export const invalidParameter = (field: string, message: string): AppError =>
  new AppError('INVALID_PARAMETER', message, { field })

/** A problem the pure core found in a request (templates answer ParamProblem, never throw): 400 INVALID_PARAMETER naming its field. */
export const refusal = (problem: ParamProblem): AppError => invalidParameter(problem.field, problem.message)

/** The value a pure check accepted, or its problem thrown as refusal(). */
export function accepted<T>(checked: Checked<T>): T {
  if (!checked.ok) throw refusal(checked.problem)
  return checked.value
}
