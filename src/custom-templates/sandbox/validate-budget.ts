import { AppError } from '../../http/errors.js'
import { SANDBOX_LIMITS } from './limits.js'

/**
 * The sandbox time left to one submission's params checks (SANDBOX_LIMITS.submissionValidateMs in all):
 * a sweep's POST makes one and passes it to every resolve it asks of the sandbox. Each call is bounded by
 * what is left and charged what its thread measured (time waiting for a thread is not the module's).
 */
export class ValidateBudget {
  private spentMs = 0

  leftMs(): number {
    return SANDBOX_LIMITS.submissionValidateMs - this.spentMs
  }

  spend(ms: number): void {
    this.spentMs += ms
  }
}

/** The 400 of a submission whose params checks ran past the budget, saying what to do. */
export function overValidateBudget(): AppError {
  const seconds = SANDBOX_LIMITS.submissionValidateMs / 1000
  return new AppError(
    'INVALID_PARAMETER',
    `the module's validate() took more than ${seconds} s in total for this submission's configurations (its params checks get ${seconds} s together): submit fewer configurations, or make validate() cheaper`,
  )
}
