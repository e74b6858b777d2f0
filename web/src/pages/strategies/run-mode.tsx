import type { Strategy } from '../../api/types.js'

/**
 * The current (or last) run's mode, loud for live: "LIVE · main account" against a dry run's "dry run",
 * so a live run never looks like a paper one. Nothing before the first deploy.
 */
export function ModeBadge({ strategy }: { strategy: Pick<Strategy, 'mode' | 'exchange_key'> }) {
  if (strategy.mode === null) return <span class="muted" data-testid="mode" data-mode="none">—</span>
  if (strategy.mode === 'dry_run') {
    return (
      <span class="badge dry-run" data-testid="mode" data-mode="dry_run" title="paper wallet, no real orders">
        dry run
      </span>
    )
  }
  const key = strategy.exchange_key
  return (
    <span class="badge live-mode" data-testid="mode" data-mode="live" data-exchange-key={key?.id ?? ''} title={key ? `exchange key ${key.id}` : undefined}>
      LIVE{key ? ` · ${key.label ?? key.id}` : ''}
    </span>
  )
}
