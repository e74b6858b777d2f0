import { useEffect, useRef, useState } from 'preact/hooks'
import { rememberSubmitted } from '../../api/backtest-watch.js'
import { api } from '../../api/endpoints.js'
import type { JobCreate, TemplateInfo } from '../../api/types.js'
import { ErrorBox, Loading, toError } from '../../components/async.js'
import { defaultsOf, ParamsEditor, type Params } from '../../components/params-editor.js'
import { FEE_MODELS, TIMEFRAMES, useTemplates } from '../../components/templates.js'
import { navigate } from '../../router.js'

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The end of the chosen day, or now when that is still to come (the API refuses an end in the future). */
function endOf(date: string): string {
  const end = new Date(`${date}T23:59:59Z`)
  return (end.getTime() > Date.now() ? new Date(Math.floor(Date.now() / 60_000) * 60_000) : end).toISOString()
}

/** A new backtest: the template's params form (from its JSON schema) and the job's fields. */
export function BacktestForm() {
  const templates = useTemplates()
  const [templateId, setTemplateId] = useState('')
  const [params, setParams] = useState<Params>({})
  const [symbols, setSymbols] = useState('BTCUSDT')
  const [timeframe, setTimeframe] = useState<string>('1h')
  const [start, setStart] = useState(dayOf(Date.now() - 180 * 86_400_000))
  const [end, setEnd] = useState(dayOf(Date.now()))
  const [capital, setCapital] = useState('10000')
  const [leverage, setLeverage] = useState(1)
  const [feeModel, setFeeModel] = useState<string>('fixed_bps')
  const [feeBps, setFeeBps] = useState('5')
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const datesTouched = useRef(false)

  const template: TemplateInfo | undefined = templates.data?.find((t) => t.id === templateId)
  useEffect(() => {
    if (!templateId && templates.data?.[0]) setTemplateId(templates.data[0].id)
  }, [templates.data, templateId])
  useEffect(() => {
    if (template) setParams(defaultsOf(template))
  }, [template])
  // History ends at the market's clock, not ours (the built-in replay exchange replays a past moment):
  // the form starts with the 180 days before it.
  useEffect(() => {
    api.marketTime().then(({ serverTime }) => {
      if (datesTouched.current) return
      setEnd(dayOf(serverTime - 86_400_000))
      setStart(dayOf(serverTime - 181 * 86_400_000))
    }, () => undefined)
  }, [])

  if (templates.error) return <ErrorBox error={templates.error} />
  if (!templates.data) return <Loading what="templates" />

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    const body: JobCreate = {
      template_id: templateId,
      params,
      symbols: symbols.split(/[\s,]+/).filter(Boolean).map((s) => s.toUpperCase()),
      timeframe: timeframe as JobCreate['timeframe'],
      start: `${start}T00:00:00Z`,
      end: endOf(end),
      capital: capital.trim(),
      leverage,
      fee_model: feeModel as JobCreate['fee_model'],
      ...(feeModel === 'fixed_bps' ? { fee_bps: feeBps.trim() } : {}),
    }
    try {
      const job = await api.createBacktest(body)
      rememberSubmitted(job)
      navigate(`/backtests/${job.id}`)
    } catch (failure) {
      setError(toError(failure))
      setBusy(false)
    }
  }

  return (
    <form class="card form-grid" onSubmit={submit} data-testid="backtest-form">
      <label>
        Template
        <select name="template_id" value={templateId} onChange={(e) => setTemplateId(e.currentTarget.value)}>
          {templates.data.map((t) => (
            <option key={t.id} value={t.id}>
              {t.id}
            </option>
          ))}
        </select>
      </label>
      <label>
        {template?.multi_symbol ? 'Symbols (comma separated)' : 'Symbol'}
        <input name="symbols" required value={symbols} onInput={(e) => setSymbols(e.currentTarget.value)} />
      </label>
      <label>
        Timeframe
        <select name="timeframe" value={timeframe} onChange={(e) => setTimeframe(e.currentTarget.value)}>
          {TIMEFRAMES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        From (UTC)
        <input type="date" name="start" required value={start} onInput={(e) => ((datesTouched.current = true), setStart(e.currentTarget.value))} />
      </label>
      <label>
        To (UTC, inclusive)
        <input type="date" name="end" required value={end} onInput={(e) => ((datesTouched.current = true), setEnd(e.currentTarget.value))} />
      </label>
      <label>
        Capital
        <input name="capital" inputMode="decimal" required value={capital} onInput={(e) => setCapital(e.currentTarget.value)} />
        {template ? <small>at least {template.min_capital}</small> : null}
      </label>
      <label>
        Leverage
        <input type="number" name="leverage" min={1} max={20} step={1} required value={leverage} onInput={(e) => setLeverage(Number(e.currentTarget.value))} />
      </label>
      <label>
        Fee model
        <select name="fee_model" value={feeModel} onChange={(e) => setFeeModel(e.currentTarget.value)}>
          {FEE_MODELS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      {feeModel === 'fixed_bps' ? (
        <label>
          Fee (bps per fill)
          <input name="fee_bps" inputMode="decimal" value={feeBps} onInput={(e) => setFeeBps(e.currentTarget.value)} />
        </label>
      ) : null}
      {template ? (
        <>
          <p class="hint wide">{template.description}</p>
          <div class="wide">
            <ParamsEditor template={template} value={params} onChange={setParams} />
          </div>
        </>
      ) : null}
      <div class="wide">
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy} data-testid="backtest-submit">
          {busy ? 'Submitting…' : 'Run backtest'}
        </button>
      </div>
    </form>
  )
}
