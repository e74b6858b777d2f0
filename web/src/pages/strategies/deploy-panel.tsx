import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Strategy } from '../../api/types.js'
import { ErrorBox, toError } from '../../components/async.js'
import { liveDeployKeyText, liveDeployQuestion } from '../../../../src/strategies/live-deploy-question.js'

/**
 * Deploy (dry run or live, with this run's capital and leverage) from draft or paused; pause when deployed.
 * A live deploy first asks, naming the exchange key and the capital (issue 35); a dry run sends at once.
 */
export function DeployPanel({ strategy, onChange }: { strategy: Strategy; onChange: (s: Strategy) => void }) {
  const [dryRun, setDryRunState] = useState(true)
  const [capital, setCapitalState] = useState('')
  const [leverage, setLeverageState] = useState('')
  // The question shown before a live deploy; any change to the form withdraws it, so what was confirmed is what is sent.
  const [question, setQuestion] = useState<string>()
  const setDryRun = (value: boolean) => (setQuestion(undefined), setDryRunState(value))
  const setCapital = (value: string) => (setQuestion(undefined), setCapitalState(value))
  const setLeverage = (value: string) => (setQuestion(undefined), setLeverageState(value))
  const [closePositions, setClosePositions] = useState(true)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error>()

  /** Runs one call with the form busy; a call that changes the strategy returns it. */
  const act = async (call: () => Promise<Strategy | void>) => {
    setBusy(true)
    setError(undefined)
    try {
      const changed = await call()
      if (changed) onChange(changed)
    } catch (failure) {
      setError(toError(failure))
    } finally {
      setBusy(false)
    }
  }

  const deploy = () =>
    api.deploy(strategy.id, {
      dry_run: dryRun,
      ...(capital.trim() ? { capital: capital.trim() } : {}),
      ...(leverage.trim() ? { leverage: Number(leverage) } : {}),
    })

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
        if (dryRun) return void act(deploy)
        void act(async () => {
          const keyText = liveDeployKeyText(await api.exchangeKeys(), undefined)
          setQuestion(liveDeployQuestion(strategy, keyText, capital.trim() || strategy.capital, leverage.trim() ? Number(leverage) : strategy.leverage))
        })
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
      {question ? (
        <p class="confirm" role="alertdialog" data-testid="deploy-confirm">
          {question}{' '}
          <button type="button" class="danger" disabled={busy} onClick={() => void act(deploy).then(() => setQuestion(undefined))} data-testid="deploy-live-yes">
            {busy ? 'Deploying…' : 'Deploy live'}
          </button>{' '}
          <button type="button" disabled={busy} onClick={() => setQuestion(undefined)} data-testid="deploy-cancel">
            Cancel
          </button>
        </p>
      ) : (
        <button type="submit" class="primary" disabled={busy} data-testid="deploy">
          {busy ? 'Deploying…' : strategy.status === 'paused' ? 'Resume' : 'Deploy'}
        </button>
      )}
      <ErrorBox error={error} />
    </form>
  )
}
