import type { Db } from '../db/connect.js'
import { accepted, AppError, invalidParameter, refusal } from '../http/errors.js'
import { resolveParams, symbolsProblem, templateById } from '../templates/index.js'
import { isCustomTemplateId } from './ids.js'
import { type CustomTemplateVersion, findCustomVersion } from './queries.js'
import type { StrategySandbox } from './sandbox/contract.js'
import { customTemplateBounds } from './sandbox/custom-template.js'
import type { ValidateBudget } from './sandbox/validate-budget.js'

/** A template as strategies and backtest jobs need it: resolved params and the bounds they check. */
export interface ResolvedTemplate {
  params: Record<string, unknown>
  multiSymbol: boolean
  minCapital: number
  /** A custom template: the version pinned (its code, hash and contract). */
  custom?: CustomTemplateVersion
}

export interface TemplateCatalog {
  /**
   * The template (a custom one at `version`, default its latest) with params resolved (defaults applied,
   * checked by the schema and the module's validate) and, when given, the symbol count checked. Throws 400
   * INVALID_PARAMETER naming the field; another user's custom id is unknown, like a wrong one. `budget`:
   * the submission's sandbox time for params checks, shared by all its calls (a sweep's).
   */
  resolve(userId: number, templateId: string, params: unknown, options?: { version?: number; symbols?: readonly string[]; budget?: ValidateBudget }): Promise<ResolvedTemplate>
  /**
   * resolve()'s params for many params of one template at once (a sweep's configurations): each one's
   * params, or the 400 it would get. A user's module answers them in batches on one instance.
   */
  resolveParamsMany(userId: number, templateId: string, paramsList: unknown[], options?: { version?: number; budget?: ValidateBudget }): Promise<(Record<string, unknown> | AppError)[]>
}

/** The built-in templates, and each user's own modules (their params resolved in the sandbox). */
export function templateCatalog(db: Db, sandbox: StrategySandbox): TemplateCatalog {
  const customVersion = async (userId: number, templateId: string, version: number | undefined) => {
    const found = await findCustomVersion(db, userId, templateId, version)
    if (!found) {
      const what = version === undefined ? `template_id "${templateId}"` : `version ${version} of template ${templateId}`
      throw new AppError('INVALID_PARAMETER', `unknown ${what}`, { field: version === undefined ? 'template_id' : 'template_version' })
    }
    return found
  }
  return {
    async resolveParamsMany(userId, templateId, paramsList, options = {}) {
      if (!isCustomTemplateId(templateId)) {
        const template = templateById(templateId)
        return paramsList.map((params) => {
          const resolved = template.ok ? resolveParams(template.value, params) : template
          return resolved.ok ? resolved.value : refusal(resolved.problem)
        })
      }
      const found = await customVersion(userId, templateId, options.version)
      const resolved = await sandbox.resolveParamsMany(userId, found.compiled, found.description, paramsList, options.budget)
      return resolved.map((one) => (one instanceof AppError ? one : one.params))
    },
    async resolve(userId, templateId, params, options = {}) {
      if (!isCustomTemplateId(templateId)) {
        const template = accepted(templateById(templateId))
        const symbols = options.symbols && symbolsProblem(template, options.symbols)
        if (symbols) throw refusal(symbols)
        return { params: accepted(resolveParams(template, params)), multiSymbol: template.multiSymbol, minCapital: template.minCapital }
      }
      const found = await customVersion(userId, templateId, options.version)
      const bounds = customTemplateBounds(found.description.multiSymbol)
      if (options.symbols) {
        const count = options.symbols.length
        if (count < bounds.minSymbols || (bounds.maxSymbols !== null && count > bounds.maxSymbols)) {
          throw invalidParameter('symbols', found.description.multiSymbol ? `${templateId} needs at least ${bounds.minSymbols} symbols` : `${templateId} trades one symbol; symbols must have exactly 1 entry`)
        }
      }
      const resolved = await sandbox.resolveParams(userId, found.compiled, found.description, params, options.budget)
      return {
        params: resolved.params,
        multiSymbol: found.description.multiSymbol,
        minCapital: bounds.minCapital,
        custom: found,
      }
    },
  }
}
