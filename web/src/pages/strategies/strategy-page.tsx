import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import { client } from '../../api/session.js'
import { exitsText } from '../../../../src/backtests/exit-text.js'
import type { Strategy, StrategyPosition, StrategyTrade, StreamMessage } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, toError } from '../../components/async.js'
import { usePriceDecimals } from '../../api/symbol-rules.js'
import { EXCHANGE_CLOCK, SERVER_CLOCK } from '../../components/clocks.js'
import { money, num, pct, price, QUOTE, sign, time } from '../../format.js'
import { DeployPanel } from './deploy-panel.js'
import { describeStreamMessage } from './stream-entry.js'
import { ModeBadge } from './run-mode.js'
import { ProtectiveOrders } from './protective-orders.js'
import { TemplateName } from '../../components/template-name.js'
import { ExchangeClock } from '../../components/exchange-clock.js'
import { listedOrder, type Order } from './listed-order.js'

/** A position as GET /v1/strategies/{id}/positions gives it; one from a position_opened message lacks the marks until re-read. */
type Position = Pick<StrategyPosition, 'symbol' | 'side' | 'qty' | 'entry_price' | 'opened_at'> & Partial<Pick<StrategyPosition, 'mark_price' | 'unrealized_pnl' | 'liquidation_price' | 'mode' | 'stop_price' | 'take_profit_price' | 'trailing' | 'trigger' | 'protective_orders' | 'protective_orders_error'>>

/** A pending order's side and quantity are what it will send, not yet a fill. */
const PLANNED = 'Pending: what it will send, sized at the close that stated it (a dry run fills it at the next open)'

const LOG_SIZE = 100

type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed'

/** The page's connection to the stream, in words that cannot pass for the strategy's own status ("live"). */
const STREAM_LABELS: Record<StreamState, string> = { connecting: 'updates: connecting…', open: 'updates: connected', reconnecting: 'updates: reconnecting…', closed: 'updates: off' }

/**
 * One strategy: its definition and stats, deploy and pause, and a live view fed by its status
 * stream (status, orders, positions, PnL). Orders and trades are loaded once over REST and then
 * kept current from the stream; stats are re-read after each fill the stream reports.
 */
export function StrategyPage({ id }: { id: string }) {
  const [strategy, setStrategy] = useState<Strategy>()
  const [error, setError] = useState<Error>()
  const [orders, setOrders] = useState<Order[]>([])
  const [trades, setTrades] = useState<StrategyTrade[]>([])
  const [positions, setPositions] = useState<Position[]>([])
  const [log, setLog] = useState<StreamMessage[]>([])
  const [stream, setStream] = useState<{ state: StreamState; detail?: string }>({ state: 'connecting' })
  const refreshTimer = useRef<ReturnType<typeof setTimeout>>(undefined)

  const loadOrders = () => api.strategyOrders(id).then((page) => setOrders(page.data.map(listedOrder)), (e: unknown) => setError(toError(e)))
  const loadHistory = () => {
    void loadOrders()
    api.strategyTrades(id).then((page) => setTrades(page.data), (e: unknown) => setError(toError(e)))
  }
  const loadStrategy = () => api.strategy(id).then(setStrategy, (e: unknown) => setError(toError(e)))
  /** What the run holds now, from its ledger: on load, and after every position message (marks and liquidation price). */
  const loadPositions = () => api.strategyPositions(id).then(setPositions, (e: unknown) => setError(toError(e)))
  /** Stats change with every fill but the stream carries them only with status messages: re-read, at most every 500 ms. */
  const refreshSoon = () => {
    // A throttle, not a debounce: on a fast timeframe messages keep coming, and a re-read must still happen.
    if (refreshTimer.current !== undefined) return
    refreshTimer.current = setTimeout(() => {
      refreshTimer.current = undefined
      void loadStrategy()
      void loadPositions()
      // A bar's close states the next order (pending until the next open): the stream carries fills only.
      void loadOrders()
      api.strategyTrades(id).then((page) => setTrades(page.data), () => undefined)
    }, 500)
  }

  useEffect(() => {
    void loadStrategy()
    void loadPositions()
    loadHistory()
    // The client opens each connection with a one-time ticket (browsers cannot sign a WebSocket) and
    // reconnects after 0.5 s doubling to 30 s; the stream has no replay, so a reconnect reloads the history.
    const stream = client().strategies.follow(id, {
      onOpen: ({ reconnects }) => {
        setStream({ state: 'open' })
        if (reconnects > 0) loadHistory()
      },
      onReconnecting: ({ delayMs, reason }) => setStream({ state: 'reconnecting', detail: `${reason}; again in ${Math.round(delayMs / 1000)} s` }),
      onEnd: (failure) => {
        setStream({ state: 'closed', ...(failure ? { detail: failure.message } : {}) })
        if (failure) setError(failure)
      },
      onMessage: (message) => {
        setLog((previous) => [message, ...previous].slice(0, LOG_SIZE))
        const data = message.data as Record<string, string>
        if (message.type === 'status') {
          setStrategy((previous) => (previous ? { ...previous, ...(message.data as Partial<Strategy>) } : previous))
        } else if (message.type === 'order') {
          const order: Order = {
            client_order_id: data.client_order_id!,
            symbol: data.symbol!,
            status: data.status as Order['status'],
            side: (data.side ?? null) as Order['side'],
            qty: data.qty ?? null,
            price: data.price ?? null,
            fee: data.fee ?? null,
            time: data.time ?? message.time,
            clock: data.time ? 'exchange' : 'server',
          }
          setOrders((previous) => [order, ...previous.filter((o) => o.client_order_id !== order.client_order_id)])
          refreshSoon()
        } else if (message.type === 'position_opened') {
          const opened: Position = { symbol: data.symbol!, side: data.side as Position['side'], qty: data.qty!, entry_price: data.entry_price!, opened_at: data.time ?? message.time }
          setPositions((previous) => [opened, ...previous.filter((p) => p.symbol !== opened.symbol)])
          refreshSoon()
        } else if (message.type === 'position_closed') {
          setPositions((previous) => previous.filter((p) => p.symbol !== data.symbol))
          refreshSoon()
        } else if (message.type === 'error') {
          void loadStrategy()
        }
      },
    })
    return () => {
      stream.close()
      clearTimeout(refreshTimer.current)
      refreshTimer.current = undefined
    }
  }, [id])

  const decimals = usePriceDecimals(strategy?.symbols ?? [])
  const tick = (symbol: string, value: unknown) => price(value as string | null | undefined, decimals(symbol))
  if (!strategy) return error ? <ErrorBox error={error} /> : <Loading what={id} />
  const stats = strategy.stats
  return (
    <section data-testid="strategy" data-strategy-id={strategy.id}>
      <div class="heading">
        <h1>{strategy.name}</h1>
        <span class={`badge ${strategy.status}`} data-testid="live-status" data-status={strategy.status}>
          {strategy.status}
        </span>
        <ModeBadge strategy={strategy} />
        <span class={`stream ${stream.state}`} data-testid="stream-state" data-state={stream.state} title={stream.detail ?? "This page's connection to the strategy's updates, not the strategy's status"}>
          {STREAM_LABELS[stream.state]}
        </span>
      </div>
      <p class="muted">
        {strategy.id} · <TemplateName id={strategy.template_id} version={strategy.template_version} /> · {strategy.symbols.join(', ')} · {strategy.timeframe} · capital {money(strategy.capital)} · ×{strategy.leverage} · params{' '}
        <code>{JSON.stringify(strategy.params)}</code>
      </p>
      <p class="muted" data-testid="strategy-exits" data-exits={strategy.exits ? JSON.stringify(strategy.exits) : ''}>
        Protective exits: {exitsText(strategy.exits) ?? 'none'}
      </p>
      {strategy.last_error ? <LastError strategy={strategy} onChange={setStrategy} /> : null}
      <dl class="metrics" data-testid="strategy-stats">
        <div data-stat="total_pnl" data-value={stats.total_pnl}>
          <dt>PnL (realized + unrealized, {QUOTE})</dt>
          <dd class={sign(stats.total_pnl)}>{num(stats.total_pnl)}</dd>
        </div>
        <div data-stat="open_positions" data-value={stats.open_positions}>
          <dt>Open positions</dt>
          <dd>{stats.open_positions}</dd>
        </div>
        <div data-stat="total_trades" data-value={stats.total_trades}>
          <dt>Closed trades</dt>
          <dd>{stats.total_trades}</dd>
        </div>
        <div data-stat="win_rate" data-value={stats.win_rate}>
          <dt>Win rate</dt>
          <dd>{pct(stats.win_rate, 1)}</dd>
        </div>
        <div title={SERVER_CLOCK} data-clock="server">
          <dt>Deployed</dt>
          <dd>{time(strategy.deployed_at)}</dd>
        </div>
        <div data-stat="last_bar_at" data-value={strategy.last_bar_at ?? ''}>
          <dt>Last bar acted on</dt>
          <dd>{time(strategy.last_bar_at)}</dd>
        </div>
        <ExchangeClock />
      </dl>
      <ErrorBox error={error} />
      <DeployPanel strategy={strategy} onChange={setStrategy} />

      <h2>Position</h2>
      <div data-testid="position" data-open={positions.length > 0 ? 'true' : 'false'}>
        {positions.length > 0 ? (
          positions.map((p) => (
            <div key={p.symbol}>
              <p data-testid="position-row" data-symbol={p.symbol} data-qty={p.qty} data-mark={p.mark_price ?? ''} data-pnl={p.unrealized_pnl ?? ''}>
                <span class={`badge ${p.side === 'buy' ? 'long' : 'short'}`}>{p.side === 'buy' ? 'long' : 'short'}</span> {p.qty} {p.symbol} at {tick(p.symbol, p.entry_price)} since{' '}
                <span title={EXCHANGE_CLOCK}>{time(p.opened_at ?? null)}</span>
                {p.mark_price ? (
                  <>
                    {' '}
                    · mark {tick(p.symbol, p.mark_price)} · unrealized <span class={sign(p.unrealized_pnl ?? '0')}>{money(p.unrealized_pnl ?? '0')}</span>
                    {p.liquidation_price ? ` · liquidation ${tick(p.symbol, p.liquidation_price)}` : ''}
                  </>
                ) : null}
                <ProtectingLevels position={p} tick={(value) => tick(p.symbol, value)} />
              </p>
              <ProtectiveOrders position={p} tick={(value) => tick(p.symbol, value)} />
            </div>
          ))
        ) : (
          <p class="muted">{stats.open_positions > 0 ? `${stats.open_positions} open` : 'Flat.'}</p>
        )}
      </div>

      <h2>Orders</h2>
      <TableWrap>
        <table data-testid="orders-table">
          <thead>
            <tr>
              <th title={`When filled, or stated while pending: ${EXCHANGE_CLOCK}`} data-clock="exchange">Time</th>
              <th class="secondary">Client order id</th>
              <th>Status</th>
              <th>Side</th>
              <th class="num">Qty</th>
              <th class="num">Price</th>
              <th class="num secondary">Fee ({QUOTE})</th>
            </tr>
          </thead>
          <tbody>
            {orders.map((o) => (
              <OrderRow key={o.client_order_id} order={o} tick={(value) => tick(o.symbol, value)} />
            ))}
          </tbody>
        </table>
      </TableWrap>
      {orders.length === 0 ? <p class="muted">No orders yet.</p> : null}

      <h2>Closed trades</h2>
      <TableWrap>
        <table data-testid="strategy-trades">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>Side</th>
              <th title={EXCHANGE_CLOCK} data-clock="exchange">Entry</th>
              <th class="num secondary">Entry price</th>
              <th class="secondary">Exit</th>
              <th class="num secondary">Exit price</th>
              <th class="num secondary">Qty</th>
              <th class="num" data-key="pnl">PnL ({QUOTE})</th>
            </tr>
          </thead>
          <tbody>
            {trades.map((t) => (
              <tr key={t.id} data-trade-id={t.id}>
                <td class="num">{t.id}</td>
                <td>{t.side === 'buy' ? 'long' : 'short'}</td>
                <td>{time(t.entry_time)}</td>
                <td class="num secondary">{tick(t.symbol, t.entry_price)}</td>
                <td class="secondary">{time(t.exit_time)}</td>
                <td class="num secondary">{tick(t.symbol, t.exit_price)}</td>
                <td class="num secondary">{t.qty}</td>
                <td class={`num ${sign(t.pnl)}`}>{num(t.pnl)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>

      <h2>Stream</h2>
      <ol class="log" data-testid="stream-log">
        {log.map((m, i) => (
          <li key={`${m.time}-${i}`} data-type={m.type} title={JSON.stringify(m.data)}>
            <time title={SERVER_CLOCK}>{time(m.time)}</time> {describeStreamMessage(m, tick)}
          </li>
        ))}
      </ol>
    </section>
  )
}

/**
 * Why the strategy is (or last was) in error, next to its status; in error, an edit control returns it to
 * draft (PATCH: any edit does; the name is sent as it is), from which it can be fixed and deployed again.
 */
function LastError({ strategy, onChange }: { strategy: Strategy; onChange: (s: Strategy) => void }) {
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const lastError = strategy.last_error!
  const reopen = async () => {
    setBusy(true)
    setError(undefined)
    try {
      onChange(await api.updateStrategy(strategy.id, { name: strategy.name }))
    } catch (failure) {
      setError(toError(failure))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class="last-error card" data-testid="last-error" data-code={lastError.code}>
      <span class="badge error">{lastError.code}</span>
      <span data-testid="last-error-message">{lastError.message}</span>
      <span class="muted">{time(lastError.at)}</span>
      {strategy.status === 'error' ? (
        <button type="button" onClick={reopen} disabled={busy} data-testid="back-to-draft">
          Back to draft
        </button>
      ) : null}
      <ErrorBox error={error} />
    </div>
  )
}

/** What protects a position now (GET …/positions): its stop, target and trailing stop, judged on last or mark prices. */
function ProtectingLevels({ position: p, tick }: { position: Position; tick: (value: string) => string }) {
  const parts: string[] = []
  if (p.stop_price) parts.push(`stop ${tick(p.stop_price)}`)
  if (p.take_profit_price) parts.push(`take profit ${tick(p.take_profit_price)}`)
  if (p.trailing) {
    if (p.trailing.stop_price) parts.push(`trailing stop ${tick(p.trailing.stop_price)} (best ${p.trailing.best_price ? tick(p.trailing.best_price) : '-'})`)
    else if (p.trailing.activation_price) parts.push(`trailing from ${tick(p.trailing.activation_price)}`)
  }
  if (parts.length === 0) return null
  return (
    <span data-testid="position-levels" data-stop={p.stop_price ?? ''} data-take-profit={p.take_profit_price ?? ''}>
      {' '}
      · {parts.join(' · ')}
      {p.trigger ? ` (${p.trigger} price)` : ''}
    </span>
  )
}

/** One order: a pending one's side and quantity are what it will send, sized at the close that stated it. */
function OrderRow({ order: o, tick }: { order: Order; tick: (value: string | null) => string }) {
  const planned = o.status === 'new' ? { title: PLANNED, 'data-planned': 'true' } : {}
  return (
    <tr data-order-id={o.client_order_id} data-status={o.status}>
      <td title={o.clock === 'exchange' ? EXCHANGE_CLOCK : SERVER_CLOCK} data-clock={o.clock}>
        {time(o.time)}
      </td>
      <td class="secondary">
        <code>{o.client_order_id}</code>
      </td>
      <td>{o.status}</td>
      <td {...planned}>{o.side ?? '—'}</td>
      <td class="num" {...planned}>
        {o.qty ?? '—'}
      </td>
      <td class="num">{tick(o.price)}</td>
      <td class="num secondary">{o.fee === null ? '—' : num(o.fee, 4)}</td>
    </tr>
  )
}
