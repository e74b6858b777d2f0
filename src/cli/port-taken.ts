import { CommandFailed } from './cli-errors.js'

/**
 * A listen that failed because the port is taken becomes one line naming the address and how to pick
 * another (no stack trace); any other error passes through unchanged.
 */
export function portTaken(error: unknown, what: string, howToChoose: string): unknown {
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number }
  if (failure?.code !== 'EADDRINUSE') return error
  const where = failure.port === undefined ? 'its port' : `port ${failure.port}${failure.address ? ` on ${failure.address}` : ''}`
  return new CommandFailed(`${what} cannot listen: ${where} is already in use by another process; ${howToChoose}`)
}
