import { useEffect, useRef, useState } from 'preact/hooks'
import type { JobCreate, TemplateInfo } from '../api/types.js'
import { ErrorBox, Loading } from './async.js'
import { ExitFields, exitsBody, exitsDraftOf, type ExitsDraft } from './exit-fields.js'
import { defaultsOf, ParamsEditor, type Params } from './params-editor.js'
import { templateLabel, TIMEFRAMES, useTemplates } from './templates.js'

/** What a strategy and a backtest share: template and params, symbols, timeframe, capital, leverage, protective exits. */
export interface StrategyDraft {
  templateId: string
  params: Params
  /** As typed: comma or space separated. */
  symbols: string
  timeframe: string
  capital: string
  leverage: number
  exits: ExitsDraft
}

type Timeframe = NonNullable<JobCreate['timeframe']>

/** The draft as the API's fields (POST /v1/strategies and POST /v1/backtest/jobs name them alike). */
export function draftBody(draft: StrategyDraft): { template_id: string; params: Params; symbols: string[]; timeframe: Timeframe; capital: string; leverage: number; exits?: NonNullable<JobCreate['exits']> } {
  const exits = exitsBody(draft.exits) as JobCreate['exits']
  return {
    template_id: draft.templateId,
    params: draft.params,
    symbols: draft.symbols.split(/[\s,]+/).filter(Boolean).map((s) => s.toUpperCase()),
    timeframe: draft.timeframe as Timeframe,
    capital: draft.capital.trim(),
    leverage: draft.leverage,
    ...(exits ? { exits } : {}),
  }
}

/**
 * A draft that starts on the given template (default: the first) with its defaults, and resets the
 * params when the template changes. `initial.params` (a configuration to repeat) overlays the starting
 * template's defaults once.
 */
export function useStrategyDraft(initial: Pick<StrategyDraft, 'timeframe' | 'capital'> & Partial<Pick<StrategyDraft, 'templateId' | 'params' | 'symbols' | 'leverage' | 'exits'>>) {
  const templates = useTemplates()
  const { params: initialParams, ...rest } = initial
  const [draft, setDraft] = useState<StrategyDraft>({ templateId: '', params: {}, symbols: 'BTCUSDT', leverage: 1, exits: exitsDraftOf(undefined), ...rest })
  const pendingParams = useRef(initialParams)
  const template: TemplateInfo | undefined = templates.data?.find((t) => t.id === draft.templateId)
  useEffect(() => {
    if (!draft.templateId && templates.data?.[0]) setDraft((d) => ({ ...d, templateId: templates.data![0]!.id }))
  }, [templates.data, draft.templateId])
  useEffect(() => {
    if (!template) return
    const overlay = template.id === initial.templateId ? pendingParams.current : undefined
    pendingParams.current = undefined
    setDraft((d) => ({ ...d, params: { ...defaultsOf(template), ...overlay } }))
  }, [template])
  return { templates, template, draft, setDraft }
}

/**
 * The shared inputs, laid out in the caller's `.form-grid`; the params editor spans the grid. `problem`:
 * the API's refusal of an exits field, shown at that field.
 */
export function StrategyFields({ state, problem }: { state: ReturnType<typeof useStrategyDraft>; problem?: { field: string; message: string } | undefined }) {
  const { templates, template, draft, setDraft } = state
  if (templates.error) return <ErrorBox error={templates.error} />
  if (!templates.data) return <Loading what="templates" />
  const set = (patch: Partial<StrategyDraft>) => setDraft((d) => ({ ...d, ...patch }))
  return (
    <>
      <label>
        Template
        <select name="template_id" value={draft.templateId} onChange={(e) => set({ templateId: e.currentTarget.value })}>
          {templates.data.map((t) => (
            <option key={t.id} value={t.id}>
              {templateLabel(t)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {template?.multi_symbol ? 'Symbols (comma separated)' : 'Symbol'}
        <input name="symbols" required value={draft.symbols} onInput={(e) => set({ symbols: e.currentTarget.value })} />
      </label>
      <label>
        Timeframe
        <select name="timeframe" value={draft.timeframe} onChange={(e) => set({ timeframe: e.currentTarget.value })}>
          {TIMEFRAMES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        Capital
        <input name="capital" inputMode="decimal" required value={draft.capital} onInput={(e) => set({ capital: e.currentTarget.value })} />
        {template ? <small>at least {template.min_capital}</small> : null}
      </label>
      <label>
        Leverage
        <input type="number" name="leverage" min={1} max={20} step={1} required value={draft.leverage} onInput={(e) => set({ leverage: Number(e.currentTarget.value) })} />
      </label>
      {template ? (
        <>
          <p class="hint wide">{template.description}</p>
          <div class="wide">
            <ParamsEditor template={template} value={draft.params} onChange={(params) => set({ params })} />
          </div>
        </>
      ) : null}
      <ExitFields value={draft.exits} onChange={(exits) => set({ exits })} problem={problem} />
    </>
  )
}
