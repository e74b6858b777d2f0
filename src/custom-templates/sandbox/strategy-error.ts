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

/** The first "strategy.js:line:column" (or "strategy.js:line") of a QuickJS stack, as "line:column". */
export function locationIn(stack: string | undefined): string | undefined {
  const match = /strategy\.js:(\d+)(?::(\d+))?/.exec(stack ?? '')
  if (!match) return undefined
  return match[2] ? `${match[1]}:${match[2]}` : match[1]
}
