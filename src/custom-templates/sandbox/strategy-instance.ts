import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import releaseSync from '@jitl/quickjs-wasmfile-release-sync'
import {
  DefaultIntrinsics,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
  shouldInterruptAfterDeadline,
} from 'quickjs-emscripten-core'
import { GUEST_DRIVER } from './guest-driver.js'
import { guestText } from './guest-text.js'
import { SANDBOX_LIMITS } from './limits.js'
import { type ModuleAnswer, moduleAnswer } from './module-answer.js'
import { MODULE_EVAL_NAME } from './module-file-name.js'
import { locationIn, StrategyError } from './strategy-error.js'

/** What the module exports, as the driver reads it inside the sandbox. */
export interface ModuleExports {
  params: unknown
  multi: boolean
  validate: boolean
  warmup: boolean
  create: boolean
}

/** The context create(p, ctx) receives. */
export interface GuestContext {
  symbols: string[]
  timeframe: string
  interval_ms: number
  rules: Record<string, { tick_size: number; step_size: number; min_qty: number; min_notional: number }>
}

const PAGE = 64 * 1024
// The package's types are CommonJS-shaped under NodeNext; at run time the ESM build's default is the variant.
const variant = releaseSync as unknown as QuickJSSyncVariant
/** Node has WebAssembly; the ES2023 lib this project compiles against does not declare it. */
const { Memory, compile } = (
  globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object; compile: (bytes: Uint8Array) => Promise<object> } }
).WebAssembly

/**
 * QuickJS compiled once per thread and instantiated per module: compiling the 0.5 MB .wasm was most of a
 * sandbox's start (11–16 ms of 15–36 ms, bench/custom.ts); a compiled module holds code only, never state
 * (each instance still gets its own Memory), so sharing it within a thread shares nothing between users.
 */
let compiled: Promise<object> | undefined
function compiledQuickJS(): Promise<object> {
  compiled ??= readFile(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')).then((bytes) => compile(bytes))
  return compiled
}

export interface InstanceOptions {
  /**
   * The soft bound of one call (QuickJS's interrupt handler), before a per-bar allowance for batches. An
   * engine thread gives its job's whole budget here: wall time on a loaded host is not the module's fault,
   * and the thread's watchdog holds the hard bound anyway.
   */
  callMs?: number
  /** The module as its errors name it (moduleFileName: the uploaded file's name); strategy.js when not given. */
  file?: string
  /** A Date.now() time no call may run past (a submission's params checks: ValidateBudget); loading the module included. */
  deadline?: number
}

/**
 * One user module in its own QuickJS WebAssembly instance: its own linear memory capped at
 * SANDBOX_LIMITS.memoryBytes, its own runtime and context, no host function exposed. Calls are
 * synchronous: the caller is always a worker thread whose parent holds the hard wall-clock bound.
 * After any failure inside the guest (an exception, a timeout, out of memory) the instance is dead:
 * QuickJS is not safe to reuse after an out-of-memory (research fact 2), so none is reused.
 */
export class StrategyInstance {
  private dead = false
  private callMs: number = SANDBOX_LIMITS.callMs
  private deadline = Infinity
  /** An out-of-memory or a WebAssembly trap: not even a read of the driver's state is safe afterwards. */
  private poisoned = false
  private readonly driver: Record<'info' | 'validate' | 'warmup' | 'create' | 'bars' | 'step' | 'at', QuickJSHandle>
  /** The run's symbols (create's context), to name the symbol of a step's answer the host refuses. */
  private symbols: readonly string[] = []
  private file = MODULE_EVAL_NAME

  private constructor(
    private readonly module: QuickJSWASMModule,
    private readonly runtime: QuickJSRuntime,
    private readonly context: QuickJSContext,
    driver: QuickJSHandle,
  ) {
    this.driver = Object.fromEntries(
      (['info', 'validate', 'warmup', 'create', 'bars', 'step', 'at'] as const).map((name) => [name, context.getProp(driver, name)]),
    ) as StrategyInstance['driver']
    driver.dispose()
  }

  /** Loads `code` (an ES module) with Math.random seeded by `seed`; a module that fails to evaluate throws StrategyError. */
  static async load(code: string, seed: number, options: InstanceOptions = {}): Promise<StrategyInstance> {
    const memory = new Memory({ initial: 256, maximum: SANDBOX_LIMITS.memoryBytes / PAGE })
    const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory: memory as never, wasmModule: (await compiledQuickJS()) as never }))
    const runtime = module.newRuntime()
    runtime.setMaxStackSize(SANDBOX_LIMITS.stackBytes)
    // No loader: any import, static or dynamic, fails inside the guest with "could not load module".
    runtime.setModuleLoader((name) => ({ error: new Error(`imports are not available in a strategy module (${name})`) }))
    const context = runtime.newContext({ intrinsics: { ...DefaultIntrinsics, Date: false } })
    const deadline = options.deadline ?? Infinity
    const guard = (ms: number) => runtime.setInterruptHandler(shouldInterruptAfterDeadline(Math.min(Date.now() + ms, deadline)))
    guard(SANDBOX_LIMITS.callMs)
    const file = options.file ?? MODULE_EVAL_NAME
    const factory = StrategyInstance.unwrap(context, context.evalCode(GUEST_DRIVER, 'driver.js', { type: 'global', strict: true }))
    const seedHandle = context.newNumber(seed >>> 0)
    const make = StrategyInstance.unwrap(context, context.callFunction(factory, context.undefined, seedHandle))
    seedHandle.dispose()
    factory.dispose()
    guard(SANDBOX_LIMITS.callMs)
    const namespace = StrategyInstance.unwrap(context, context.evalCode(code, MODULE_EVAL_NAME, { type: 'module' }), file)
    const driver = StrategyInstance.unwrap(context, context.callFunction(make, context.undefined, namespace), file)
    make.dispose()
    namespace.dispose()
    const instance = new StrategyInstance(module, runtime, context, driver)
    instance.callMs = options.callMs ?? SANDBOX_LIMITS.callMs
    instance.deadline = deadline
    instance.file = file
    return instance
  }

  info(): ModuleExports {
    return JSON.parse(this.callString('info')) as ModuleExports
  }

  /** The module's validate(params): a problem, or undefined when the params are fine. */
  validate(params: Record<string, unknown>): { field: string; message: string } | undefined {
    const answer = this.callString('validate', JSON.stringify(params))
    if (answer === '') return undefined
    const problem = JSON.parse(answer) as { field: string; message: string }
    return { field: guestText(problem.field), message: guestText(problem.message) }
  }

  /** The module's warmup(params), as it answered (the caller checks it is a whole number under the cap). */
  warmup(params: Record<string, unknown>): number {
    return this.callNumber('warmup', JSON.stringify(params))
  }

  create(params: Record<string, unknown>, context: GuestContext): void {
    this.symbols = context.symbols
    this.call('create', 0, [this.context.newString(JSON.stringify(params)), this.context.newString(JSON.stringify(context))]).dispose()
  }

  /** onBar over `count` bars (BAR_FIELDS columns each), funding triples delivered in between; a target (and levels) per bar, checked. */
  bars(columns: Float64Array, count: number, funding: Float64Array, fundingCount: number): ModuleAnswer {
    return this.callBuffers('bars', columns, count, funding, fundingCount, count, (k) => `the bar at ${isoTime(columns[8 * k]!)}`)
  }

  /** onStep over one step: `count` bars of (symbol index + BAR_FIELDS columns), funding of (symbol index, time, rate, mark); targets (and levels) by symbol index, checked. */
  step(bars: Float64Array, count: number, funding: Float64Array, fundingCount: number): ModuleAnswer {
    const symbols = this.symbols
    return this.callBuffers('step', bars, count, funding, fundingCount, symbols.length, (s) => `${symbols[s]} at the bar at ${isoTime(bars[1]!)}`)
  }

  /** The open time of the bar the module was given last (for error messages), also after it failed unless its memory is gone. */
  at(): number | undefined {
    if (this.poisoned) return undefined
    this.dead = false
    try {
      return this.callNumber('at')
    } catch {
      return undefined
    } finally {
      this.dead = true
    }
  }

  /** Bytes of the instance's linear memory (its high-water mark: WebAssembly memory never shrinks). */
  memoryBytes(): number {
    return this.module.getWasmMemory().buffer.byteLength
  }

  dispose(): void {
    if (this.dead) return
    this.dead = true
    for (const handle of Object.values(this.driver)) handle.dispose()
    this.context.dispose()
    this.runtime.dispose()
  }

  /** A batch or step into the guest, and its answer of `n` targets read and checked on this side (moduleAnswer). */
  private callBuffers(
    name: 'bars' | 'step',
    data: Float64Array,
    count: number,
    funding: Float64Array,
    fundingCount: number,
    n: number,
    where: (k: number) => string,
  ): ModuleAnswer {
    const c = this.context
    const result = this.call(name, count * SANDBOX_LIMITS.callPerBarMs, [
      c.newArrayBuffer(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
      c.newNumber(count),
      c.newArrayBuffer(funding.buffer.slice(funding.byteOffset, funding.byteOffset + funding.byteLength)),
      c.newNumber(fundingCount),
    ])
    try {
      const type = c.typeof(result)
      if (type !== 'object') throw new StrategyError('STRATEGY_INVALID_OUTPUT', `the sandbox answered a ${type} for ${where(0)}, not its targets`)
      let view: ReturnType<QuickJSContext['getArrayBuffer']>
      try {
        view = c.getArrayBuffer(result)
      } catch {
        // quickjs-emscripten reads a non-ArrayBuffer as a failed allocation ("Couldn't allocate memory"), once taken for STRATEGY_OOM (issue 37).
        throw new StrategyError('STRATEGY_INVALID_OUTPUT', `the sandbox answered an object other than an ArrayBuffer for ${where(0)}, not its targets`)
      }
      try {
        return moduleAnswer(view.value, n, where)
      } finally {
        view.dispose()
      }
    } catch (error) {
      // Whatever it sent, the guest is not called again, not even to name its last bar: the message names the bar.
      this.dead = true
      this.poisoned = true
      throw error
    } finally {
      result.dispose()
    }
  }

  private callString(name: keyof StrategyInstance['driver'], argument?: string): string {
    const result = this.call(name, 0, argument === undefined ? [] : [this.context.newString(argument)])
    const text = this.context.getString(result)
    result.dispose()
    return text
  }

  private callNumber(name: keyof StrategyInstance['driver'], argument?: string): number {
    const result = this.call(name, 0, argument === undefined ? [] : [this.context.newString(argument)])
    const value = this.context.getNumber(result)
    result.dispose()
    return value
  }

  private call(name: keyof StrategyInstance['driver'], allowanceMs: number, args: QuickJSHandle[]): QuickJSHandle {
    if (this.dead) throw new StrategyError('STRATEGY_ERROR', 'the strategy failed earlier and cannot be called again')
    this.runtime.setInterruptHandler(shouldInterruptAfterDeadline(Math.min(Date.now() + this.callMs + allowanceMs, this.deadline)))
    try {
      return StrategyInstance.unwrap(this.context, this.context.callFunction(this.driver[name], this.context.undefined, ...args), this.file)
    } catch (error) {
      // Whatever failed inside, the instance is not trusted again; a StrategyError reaches the caller.
      this.dead = true
      this.poisoned = !(error instanceof StrategyError) || error.code === 'STRATEGY_OOM'
      throw error
    } finally {
      for (const handle of args) if (handle.alive) handle.dispose()
    }
  }

  private static unwrap(context: QuickJSContext, result: ReturnType<QuickJSContext['evalCode']>, file = MODULE_EVAL_NAME): QuickJSHandle {
    if (!result.error) return result.value
    const dumped = safeDump(context, result.error)
    result.error.dispose()
    throw guestError(dumped, file)
  }
}

/** An open time as ISO text, for messages; the number itself when it is not a time. */
function isoTime(time: number): string {
  return Number.isFinite(time) && Math.abs(time) <= 8.64e15 ? new Date(time).toISOString() : String(time)
}

interface Dumped {
  name?: string
  message?: string
  stack?: string
}

function safeDump(context: QuickJSContext, handle: QuickJSHandle): Dumped {
  try {
    const value = context.dump(handle) as unknown
    if (value && typeof value === 'object') return value as Dumped
    return { message: String(value) }
  } catch {
    return { message: 'the strategy threw a value that could not be read' }
  }
}

/** A guest exception as a StrategyError with the module's line:column where the stack has one; its name and message cut to GUEST_TEXT_MAX. */
export function guestError(error: Dumped, file = MODULE_EVAL_NAME): StrategyError {
  const message = typeof error.message === 'string' ? guestText(error.message) : 'the strategy failed'
  const name = typeof error.name === 'string' ? guestText(error.name) : 'Error'
  if (name === 'InternalError' && /interrupted/.test(message)) return new StrategyError('STRATEGY_TIMEOUT', 'the strategy ran longer than its time for one call')
  if (/out of memory/i.test(message)) return new StrategyError('STRATEGY_OOM', `the strategy used more than its ${SANDBOX_LIMITS.memoryBytes / 2 ** 20} MiB of memory`)
  const at = locationIn(error.stack)
  const where = at ? ` (${file} ${at})` : ''
  if (name === 'StrategyOutputError') return new StrategyError('STRATEGY_INVALID_OUTPUT', `${message}${where}`)
  return new StrategyError('STRATEGY_ERROR', `${name}: ${message}${where}`)
}
