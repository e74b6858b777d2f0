/**
 * TEMPORARY, lead replaces (issue 22): a stand-in for the real sandbox so the templates API can be built
 * and tested on its own branch. It evaluates a module with QuickJS in the calling thread under a soft
 * deadline only: no worker thread, no memory bound, no smoke run. Drop this file at merge.
 */
import crypto from 'node:crypto'
import variant from '@jitl/quickjs-wasmfile-release-sync'
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
  shouldInterruptAfterDeadline,
} from 'quickjs-emscripten-core'
import { transform } from 'sucrase'
import type { Config } from '../../config.js'
import { invalidParameter } from '../../http/errors.js'
import type { CompiledModule, ModuleDescription, ModuleLanguage, ModuleParam, StrategySandbox } from './contract.js'

const WARMUP_CAP = 100_000

export function createStrategySandbox(_config: Config): StrategySandbox {
  let quickjs: Promise<QuickJSWASMModule> | undefined
  const load = () => (quickjs ??= newQuickJSWASMModuleFromVariant(variant as unknown as QuickJSSyncVariant)) // its .d.ts is CommonJS-shaped

  async function withModule<T>(code: string, use: (context: QuickJSContext, exports: QuickJSHandle) => T): Promise<T> {
    const runtime = (await load()).newRuntime()
    runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + 500))
    const context = runtime.newContext()
    try {
      const result = context.evalCode(code, 'strategy.js', { type: 'module' })
      if (result.error) throw moduleError(context, result.error)
      try {
        return use(context, result.value)
      } finally {
        result.value.dispose()
      }
    } finally {
      context.dispose()
      runtime.dispose()
    }
  }

  function call(context: QuickJSContext, exports: QuickJSHandle, name: string, argument: unknown): unknown {
    using fn = context.getProp(exports, name)
    const arg = context.unwrapResult(context.evalCode(`(${JSON.stringify(argument)})`))
    try {
      const result = context.callFunction(fn, context.undefined, arg)
      if (result.error) throw moduleError(context, result.error)
      using value = result.value
      return context.dump(value)
    } finally {
      arg.dispose()
    }
  }

  return {
    async inspect(source: string, language: ModuleLanguage) {
      const compiled = compile(source, language)
      const description = await withModule(compiled.code, (context, exports) => {
        const kind = (name: string) => {
          using handle = context.getProp(exports, name)
          return context.typeof(handle)
        }
        if (kind('create') !== 'function') throw invalidParameter('source', 'the module does not export a function create(params, ctx)')
        if (kind('warmup') !== 'function') throw invalidParameter('source', 'the module does not export a function warmup(params)')
        const raw = (() => {
          using handle = context.getProp(exports, 'params')
          return context.dump(handle) as unknown
        })()
        const properties = checkParams(raw)
        const defaults = Object.fromEntries(Object.entries(properties).map(([name, param]) => [name, param.default]))
        const multi = (() => {
          using handle = context.getProp(exports, 'multi_symbol')
          return context.dump(handle) === true
        })()
        const warmup = call(context, exports, 'warmup', defaults)
        if (!Number.isInteger(warmup) || (warmup as number) < 0 || (warmup as number) > WARMUP_CAP) {
          throw invalidParameter('source', `warmup(defaults) must be an integer from 0 to ${WARMUP_CAP}, not ${JSON.stringify(warmup)}`)
        }
        const result: ModuleDescription = {
          paramsSchema: { type: 'object', properties, additionalProperties: false },
          defaults,
          multiSymbol: multi,
          warmup: warmup as number,
          hasValidate: kind('validate') === 'function',
        }
        return result
      })
      return { compiled, description }
    },

    async resolveParams(compiled: CompiledModule, description: ModuleDescription, params: unknown) {
      if (typeof params !== 'object' || params === null || Array.isArray(params)) throw invalidParameter('params', 'params must be an object')
      const given = params as Record<string, unknown>
      const properties = description.paramsSchema.properties
      const unknown = Object.keys(given).find((name) => !(name in properties))
      if (unknown !== undefined) throw invalidParameter(`params.${unknown}`, `params.${unknown} is not a parameter of this template`)
      const resolved: Record<string, unknown> = { ...description.defaults, ...given }
      for (const [name, param] of Object.entries(properties)) {
        const problem = paramProblem(param, resolved[name])
        if (problem) throw invalidParameter(`params.${name}`, `params.${name} ${problem}`)
      }
      const warmup = await withModule(compiled.code, (context, exports) => {
        if (description.hasValidate) {
          const problem = call(context, exports, 'validate', resolved) as { field?: unknown; message?: unknown } | undefined
          if (problem) throw invalidParameter(`params.${String(problem.field)}`, String(problem.message))
        }
        return call(context, exports, 'warmup', resolved) as number
      })
      return { params: resolved, warmup }
    },

    async close() {},
  }
}

function compile(source: string, language: ModuleLanguage): CompiledModule {
  let code = source
  if (language === 'typescript') {
    try {
      code = transform(source, { transforms: ['typescript'], disableESTransforms: true }).code
    } catch (error) {
      throw invalidParameter('source', `TypeScript: ${(error as Error).message}`)
    }
  }
  return { code, sha256: crypto.createHash('sha256').update(code).digest('hex') }
}

function moduleError(context: QuickJSContext, handle: QuickJSHandle) {
  const error = context.dump(handle) as { name?: string; message?: string; stack?: string } | string
  handle.dispose()
  if (typeof error !== 'object' || error === null) return invalidParameter('source', `the module threw ${JSON.stringify(error)}`)
  const at = /(\d+:\d+)/.exec(error.stack ?? '')?.[1]
  return invalidParameter('source', `${error.name ?? 'Error'}: ${error.message ?? ''}${at ? ` at line:column ${at}` : ''}`)
}

function checkParams(raw: unknown): Record<string, ModuleParam> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidParameter('source', 'the module does not export params as an object')
  const properties: Record<string, ModuleParam> = {}
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const param = value as Partial<ModuleParam>
    if (!['integer', 'number', 'boolean'].includes(param?.type as string)) {
      throw invalidParameter('source', `params.${name}.type must be "integer", "number" or "boolean"`)
    }
    const problem = paramProblem(param as ModuleParam, param.default)
    if (problem) throw invalidParameter('source', `params.${name}.default ${problem}`)
    properties[name] = { ...param } as ModuleParam
  }
  return properties
}

function paramProblem(param: ModuleParam, value: unknown): string | undefined {
  if (param.type === 'boolean') return typeof value === 'boolean' ? undefined : 'must be true or false'
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a finite number'
  if (param.type === 'integer' && !Number.isInteger(value)) return 'must be an integer'
  if ((param.minimum !== undefined && value < param.minimum) || (param.maximum !== undefined && value > param.maximum)) {
    return `must be between ${param.minimum ?? '-∞'} and ${param.maximum ?? '∞'}`
  }
  return undefined
}
