import { guestText } from './guest-text.js'

/**
 * How a user's module failed, in the closed set a job's or run's error carries:
 * STRATEGY_ERROR (it threw, or broke the contract), STRATEGY_TIMEOUT (over its time), STRATEGY_OOM (over
 * its memory), STRATEGY_INVALID_OUTPUT (a target that is not a number in [−1, 1] or NaN, a bad protective
 * level or answer object, or an answer the host refuses after the crossing).
 */
export type StrategyErrorCode = 'STRATEGY_ERROR' | 'STRATEGY_TIMEOUT' | 'STRATEGY_OOM' | 'STRATEGY_INVALID_OUTPUT'

export class StrategyError extends Error {
  constructor(
    readonly code: StrategyErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'StrategyError'
  }
}

/**
 * A failure inside a module's sandbox that is not already a StrategyError: a WebAssembly trap, or the host
 * failing to read what the guest left. STRATEGY_OOM only with a sign of exhausted memory (an abort after a
 * failed allocation); anything else is STRATEGY_ERROR: issue 37 found malformed answers (3 bytes, a string,
 * an object) reported STRATEGY_OOM, and every trap had been taken for an out-of-memory. The message is cut
 * (guestText): it may quote what the guest wrote.
 */
export function sandboxFailure(error: unknown): StrategyError {
  if (error instanceof StrategyError) return error
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  if (/out of memory|\bOOM\b|enlarge memory/i.test(text)) return new StrategyError('STRATEGY_OOM', `the strategy ran out of memory inside its sandbox (${guestText(text)})`)
  return new StrategyError('STRATEGY_ERROR', `the strategy failed inside its sandbox: ${guestText(text)}`)
}

/** The first "strategy.js:line:column" (or "strategy.js:line") of a QuickJS stack, as "line:column". */
export function locationIn(stack: string | undefined): string | undefined {
  const match = /strategy\.js:(\d+)(?::(\d+))?/.exec(stack ?? '')
  if (!match) return undefined
  return match[2] ? `${match[1]}:${match[2]}` : match[1]
}
