import { CommanderError } from 'commander'
import { PerpetuaError } from '../client/errors.js'
import { ConfigError } from '../config.js'

/** A command used wrongly (a flag, a missing setting): the message says what to change; exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** The call worked but the outcome is a failure the caller scripts against (a failed job, an undelivered test). */
export class CommandFailed extends Error {
  override name = 'CommandFailed'
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
  }
}

/**
 * Exit codes: 0 done, 1 the API or the network refused (its message and code on stderr) or the
 * outcome failed, 2 a usage error, 130 interrupted (Ctrl-C).
 */
export function reportError(error: unknown, write: (line: string) => void): number {
  if (error instanceof CommanderError) {
    // commander printed its own message already (help, an unknown option, a missing argument).
    return error.exitCode === 0 ? 0 : 2
  }
  if (error instanceof PerpetuaError) {
    write(`perpetua: ${describeApiError(error)}`)
    return 1
  }
  if (error instanceof UsageError || error instanceof ConfigError) {
    write(`perpetua: ${error.message}`)
    return 2
  }
  if (error instanceof CommandFailed) {
    write(`perpetua: ${error.message}`)
    return error.exitCode
  }
  write(`perpetua: ${error instanceof Error ? error.message : String(error)}`)
  return 1
}

/** "message (CODE, HTTP 400, field capital, request req-1)": what the API said, and what to quote when reporting it. */
export function describeApiError(error: PerpetuaError): string {
  if (error.status === 0) {
    // fetch's own message is "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, bad port…) is its cause's.
    const reason = (error.cause as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
    const detail = typeof reason?.code === 'string' ? reason.code : typeof reason?.message === 'string' ? reason.message : undefined
    return detail === undefined ? error.message : `${error.message} (${detail})`
  }
  const details = [error.code, `HTTP ${error.status}`]
  if (error.field) details.push(`field ${error.field}`)
  if (error.request_id) details.push(`request ${error.request_id}`)
  return `${error.message} (${details.join(', ')})`
}
