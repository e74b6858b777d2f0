import { useEffect, useState } from 'preact/hooks'
import { onSessionChange, signedIn as isSignedIn, signOut } from './api/session.js'
import { BacktestPage } from './pages/backtests/backtest-page.js'
import { BacktestsPage } from './pages/backtests/backtests-page.js'
import { ComparePage } from './pages/backtests/compare-page.js'
import { MarketPage } from './pages/market/market-page.js'
import { SignIn } from './pages/sign-in.js'
import { SweepPage } from './pages/sweeps/sweep-page.js'
import { SweepsPage } from './pages/sweeps/sweeps-page.js'
import { StrategiesPage } from './pages/strategies/strategies-page.js'
import { StrategyPage } from './pages/strategies/strategy-page.js'
import { TemplateEditorPage } from './pages/templates/template-editor-page.js'
import { TemplatesPage } from './pages/templates/templates-page.js'
import { WebhookPage } from './pages/webhooks/webhook-page.js'
import { WebhooksPage } from './pages/webhooks/webhooks-page.js'
import { Link, match, navigate, usePath } from './router.js'

const SECTIONS = [
  { href: '/backtests', label: 'Backtests' },
  { href: '/sweeps', label: 'Sweeps' },
  { href: '/strategies', label: 'Strategies' },
  { href: '/templates', label: 'Templates' },
  { href: '/market', label: 'Market' },
  { href: '/webhooks', label: 'Webhooks' },
]

export function App() {
  const path = usePath()
  const [signedIn, setSignedIn] = useState(isSignedIn())
  useEffect(() => {
    const unsubscribe = onSessionChange(() => setSignedIn(isSignedIn()))
    // A change between the first render and this subscription (a kept token the API refused: its 401 can
    // arrive first) would otherwise be missed, leaving the tab signed in on every page's 401.
    setSignedIn(isSignedIn())
    return unsubscribe
  }, [])
  useEffect(() => {
    if (path === '/') navigate('/backtests', true)
  }, [path])

  if (!signedIn && !path.startsWith('/market')) return <SignIn />
  return (
    <>
      <header class="top">
        <Link href="/backtests" class="brand">
          Perpetua
        </Link>
        <nav>
          {SECTIONS.map((s) => (
            <Link key={s.href} href={s.href} aria-current={path.startsWith(s.href) ? 'page' : undefined}>
              {s.label}
            </Link>
          ))}
        </nav>
        {signedIn ? (
          <button type="button" class="link" onClick={signOut} data-testid="sign-out">
            Sign out
          </button>
        ) : (
          <Link href="/backtests">Sign in</Link>
        )}
      </header>
      <main class="page">
        <Page path={path} />
      </main>
    </>
  )
}

function Page({ path }: { path: string }) {
  let params: Record<string, string> | null
  if ((params = match('/backtests/compare/:a/:b', path))) return <ComparePage a={params.a!} b={params.b!} />
  if ((params = match('/backtests/:id', path))) return <BacktestPage id={params.id!} />
  if (match('/backtests', path)) return <BacktestsPage />
  if ((params = match('/sweeps/:id', path))) return <SweepPage id={params.id!} />
  if (match('/sweeps', path)) return <SweepsPage />
  if ((params = match('/strategies/:id', path))) return <StrategyPage id={params.id!} />
  if (match('/strategies', path)) return <StrategiesPage />
  // Keyed by id: saving a new template moves from /templates/new to its id, and the editor starts over from what was stored.
  if ((params = match('/templates/:id', path))) return <TemplateEditorPage key={params.id} id={params.id!} />
  if (match('/templates', path)) return <TemplatesPage />
  if (match('/market', path)) return <MarketPage />
  if ((params = match('/webhooks/:id', path))) return <WebhookPage id={params.id!} />
  if (match('/webhooks', path)) return <WebhooksPage />
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <Link href="/backtests">Back to the backtests</Link>.
      </p>
    </section>
  )
}
