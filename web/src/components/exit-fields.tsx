import { PerpetuaError } from '../../../src/client/index.js'
import type { ExitsShown } from '../../../src/backtests/exit-text.js'

/** The protective exits as typed: decimal fractions of the entry price ("" for none), and the trigger ("" = the API's default, last). */
export interface ExitsDraft {
  stop_loss: string
  take_profit: string
  trailing_stop: string
  trailing_activation: string
  trigger: '' | 'last' | 'mark'
}

type Level = Exclude<keyof ExitsDraft, 'trigger'>

const LEVELS: { field: Level; label: string; hint: string }[] = [
  { field: 'stop_loss', label: 'Stop loss', hint: 'fraction against the entry, 0.02 = 2%' },
  { field: 'take_profit', label: 'Take profit', hint: 'fraction in favour, 0.04 = 4%' },
  { field: 'trailing_stop', label: 'Trailing stop', hint: 'callback from the best price, 0.001 to 0.2' },
  { field: 'trailing_activation', label: 'Trailing activation', hint: 'trailing starts this far in favour (needs a trailing stop)' },
]

/** A draft from exits the API showed (a configuration being repeated), or an empty one. */
export function exitsDraftOf(exits: ExitsShown | null | undefined): ExitsDraft {
  return {
    stop_loss: exits?.stop_loss ?? '',
    take_profit: exits?.take_profit ?? '',
    trailing_stop: exits?.trailing_stop ?? '',
    trailing_activation: exits?.trailing_activation ?? '',
    trigger: exits?.trigger === 'last' || exits?.trigger === 'mark' ? exits.trigger : '',
  }
}

/** The `exits` field: the levels typed, with the trigger chosen; undefined when no level is typed (empty fields send nothing). */
export function exitsBody(draft: ExitsDraft): ExitsShown | undefined {
  const levels = LEVELS.map(({ field }) => [field, draft[field].trim()] as const).filter(([, value]) => value !== '')
  if (levels.length === 0) return undefined
  return { ...Object.fromEntries(levels), ...(draft.trigger ? { trigger: draft.trigger } : {}) }
}

/**
 * The API's refusal of one field of the exits or slippage ("exits.stop_loss", a sweep's "base.exits.stop_loss"),
 * shown at that field; undefined for any other error, which the form shows in its error box.
 */
export function exitFieldError(error: Error | undefined): { field: string; message: string } | undefined {
  if (!(error instanceof PerpetuaError) || !error.field) return undefined
  const field = error.field.replace(/^base\./, '')
  return field.startsWith('exits') || field === 'slippage_bps' ? { field, message: error.message } : undefined
}

/** The refusal's message under the field it names. */
export function FieldError({ problem, field }: { problem: { field: string; message: string } | undefined; field: string }) {
  if (problem?.field !== field) return null
  return (
    <small class="error" role="alert" data-testid={`field-error-${field}`}>
      {problem.message}
    </small>
  )
}

/** The exits' inputs, laid out in the caller's `.form-grid`. */
export function ExitFields({ value, onChange, problem }: { value: ExitsDraft; onChange: (draft: ExitsDraft) => void; problem: { field: string; message: string } | undefined }) {
  const stated = exitsBody(value) !== undefined
  return (
    <>
      <p class="hint wide" data-testid="exits-hint">
        Protective exits (optional): filled inside the bar on the finest history there is (1m where stored). Empty fields send nothing.
      </p>
      {LEVELS.map(({ field, label, hint }) => (
        <label key={field}>
          {label}
          <input
            name={`exits.${field}`}
            inputMode="decimal"
            placeholder="none"
            value={value[field]}
            aria-invalid={problem?.field === `exits.${field}` ? 'true' : undefined}
            onInput={(e) => onChange({ ...value, [field]: e.currentTarget.value })}
          />
          <small>{hint}</small>
          <FieldError problem={problem} field={`exits.${field}`} />
        </label>
      ))}
      <label>
        Exit trigger
        <select name="exits.trigger" value={value.trigger} disabled={!stated} onChange={(e) => onChange({ ...value, trigger: e.currentTarget.value as ExitsDraft['trigger'] })}>
          <option value="">last price (default)</option>
          <option value="last">last price</option>
          <option value="mark">mark price</option>
        </select>
        <FieldError problem={problem} field="exits.trigger" />
        <FieldError problem={problem} field="exits" />
      </label>
    </>
  )
}
