import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Strategy } from '../../api/types.js'
import { ErrorBox, toError } from '../../components/async.js'

/** Deploy (dry run or live, with this run's capital and leverage) from draft or paused; pause when deployed. */
export function DeployPanel({ strategy, onChange }: { strategy: Strategy; onChange: (s: Strategy) => void }) {
  const [dryRun, setDryRun] = useState(true)
  const [capital, setCapital] = useState('')
  const [leverage, setLeverage] = useState('')
  const [closePositions, setClosePositions] = useState(true)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error>()

  const act = async (call: () => Promise<Strategy>) => {
    setBusy(true)
    setError(undefined)
    try {
      onChange(await call())
    } catch (failure) {
      setError(toError(failure))
    } finally {
      setBusy(false)
    }
  }

  if (strategy.status === 'deployed') {
    return (
      <form class="card inline-form" data-testid="pause-form" onSubmit={(e) => (e.preventDefault(), void act(() => api.pause(strategy.id, closePositions)))}>
        <label class="check">
          <input type="checkbox" name="close_positions" checked={closePositions} onChange={(e) => setClosePositions(e.currentTarget.checked)} />
          Close open positions
        </label>
        <button type="submit" class="danger" disabled={busy} data-testid="pause">
          {busy ? 'Pausing…' : 'Pause'}
        </button>
        <ErrorBox error={error} />
      </form>
    )
  }
  if (strategy.status !== 'draft' && strategy.status !== 'paused') {
    return (
      <p class="muted card">
        A strategy in <strong>{strategy.status}</strong> cannot be deployed or paused; editing it (PATCH) moves it back to draft.
      </p>
    )
  }
  return (
    <form
      class="card inline-form"
      data-testid="deploy-form"
      onSubmit={(e) => {
        e.preventDefault()
        void act(() =>
          api.deploy(strategy.id, {
            dry_run: dryRun,
            ...(capital.trim() ? { capital: capital.trim() } : {}),
            ...(leverage.trim() ? { leverage: Number(leverage) } : {}),
          }),
        )
      }}
    >
      <fieldset class="radios">
        <label class="check">
          <input type="radio" name="mode" value="dry" checked={dryRun} onChange={() => setDryRun(true)} data-testid="mode-dry" />
          Dry run (paper wallet)
        </label>
        <label class="check">
          <input type="radio" name="mode" value="live" checked={!dryRun} onChange={() => setDryRun(false)} data-testid="mode-live" />
          Live (your exchange key)
        </label>
      </fieldset>
      <label>
        Capital for this run
        <input name="capital" inputMode="decimal" placeholder={strategy.capital} value={capital} onInput={(e) => setCapital(e.currentTarget.value)} />
      </label>
      <label>
        Leverage for this run
        <input name="leverage" type="number" min={1} max={20} placeholder={String(strategy.leverage)} value={leverage} onInput={(e) => setLeverage(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={busy} data-testid="deploy">
        {busy ? 'Deploying…' : strategy.status === 'paused' ? 'Resume' : 'Deploy'}
      </button>
      <ErrorBox error={error} />
    </form>
  )
}
