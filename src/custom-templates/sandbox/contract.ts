import type { AppError } from '../../http/errors.js'
import type { ParamProblem } from '../../templates/types.js'
import type { ValidateBudget } from './validate-budget.js'

/**
 * What the service knows of a user's strategy module once the sandbox has inspected it: the shared
 * vocabulary of the templates API (custom-templates/) and the sandbox that runs modules.
 */

/** One parameter as the module declares it (`export const params`), checked and normalised. */
export interface ModuleParam {
  type: 'integer' | 'number' | 'boolean'
  default: number | boolean
  minimum?: number
  maximum?: number
  description?: string
}

/** The params JSON Schema of a module: the shape the built-in templates' params_schema has. */
export interface ModuleParamsSchema {
  type: 'object'
  properties: Record<string, ModuleParam>
  additionalProperties: false
}

/** What inspecting a module found: its contract, read from the module in a sandbox, never from its text. */
export interface ModuleDescription {
  paramsSchema: ModuleParamsSchema
  defaults: Record<string, number | boolean>
  multiSymbol: boolean
  /** warmup(defaults): closed bars read before the first target. */
  warmup: number
  /** Whether the module exports validate (a rule across params). */
  hasValidate: boolean
  /**
   * The upload's smoke run, in µs of the sandbox thread's wall time per bar (engine and module together):
   * a job's time budget is derived from it (limits.ts, jobBudgetMs). Absent for versions stored before it was measured.
   */
  smokeUsPerBar?: number
}

/** A module ready to load: JavaScript (types already stripped, line numbers kept) and its content hash. */
export interface CompiledModule {
  /** The JavaScript the sandbox evaluates. */
  code: string
  /** Hex SHA-256 of `code`: a stored version is immutable, and jobs and runs record which code they ran. */
  sha256: string
  /** The name its errors give the module (moduleFileName); strategy.js when absent. */
  file?: string
}

export type ModuleLanguage = 'javascript' | 'typescript'

/** Params with defaults applied and checked, and the warm-up they need. */
export interface ResolvedParams {
  params: Record<string, unknown>
  warmup: number
}

/** One params' answer from a sandbox thread: resolved, or the refusal (a 400) it would be. */
export type ResolvedOrRefused = ResolvedParams | { refused: ParamProblem }

/** A sandbox thread's answer to a batch of params: each one's resolution, and the thread's time for it (ValidateBudget). */
export interface ResolvedBatch {
  answers: ResolvedOrRefused[]
  spentMs: number
}

/**
 * The sandbox as the API sees it (sandbox/sandbox-service.ts implements it; every call runs the user's
 * code in a worker thread under the limits of sandbox/limits.ts, never in the calling thread). Each call
 * names the user it is for: a user's calls run one at a time, and too many waiting is a 429 RATE_LIMITED
 * (SANDBOX_LIMITS.apiCallsPerUser, apiWaitingPerUser).
 */
export interface StrategySandbox {
  /**
   * Strips types (typescript), loads the module in a fresh instance, checks the contract (exports,
   * params well formed, defaults within bounds, warmup a finite integer under the cap) and runs a smoke
   * run over recorded bars within the limits. Throws AppError INVALID_PARAMETER (field `source`) whose
   * message names the problem and the module's line:column where there is one.
   */
  inspect(userId: number, source: string, language: ModuleLanguage, file?: string): Promise<{ compiled: CompiledModule; description: ModuleDescription }>
  /**
   * The params with defaults applied, checked against the schema and the module's validate(), and the
   * warm-up for them. Throws AppError INVALID_PARAMETER naming the field (`params.fast`). With a budget
   * (a submission's, shared by its calls) the call runs within what is left of it and is charged its time.
   */
  resolveParams(userId: number, compiled: CompiledModule, description: ModuleDescription, params: unknown, budget?: ValidateBudget): Promise<ResolvedParams>
  /**
   * resolveParams for many params (a sweep's configurations) on one instance of the module per batch:
   * each one's resolution or the AppError it would throw. Throws AppError INVALID_PARAMETER (field
   * `params`) when the module itself fails, and 400 when the budget runs out (overValidateBudget).
   */
  resolveParamsMany(userId: number, compiled: CompiledModule, description: ModuleDescription, paramsList: unknown[], budget?: ValidateBudget): Promise<(ResolvedParams | AppError)[]>
  close(): Promise<void>
}
