import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import { ErrorBox, Loading, TableWrap, useAsync } from '../../components/async.js'
import { EXCHANGE_CLOCK } from '../../components/clocks.js'
import { Pager, usePages } from '../../components/pager.js'
import { compact, num, pct, sign, time } from '../../format.js'

type Tab = 'funding' | 'tickers' | 'whales'

/** Public market data: current funding rates, the active tickers and the whale board. */
export function MarketPage() {
  const [tab, setTab] = useState<Tab>('funding')
  return (
    <section>
      <h1>Market</h1>
      <div class="tabs" role="tablist">
        {(
          [
            ['funding', 'Funding rates'],
            ['tickers', 'Active tickers'],
            ['whales', 'Whale board'],
          ] as [Tab, string][]
        ).map(([value, label]) => (
          <button key={value} type="button" role="tab" aria-selected={tab === value} onClick={() => setTab(value)} data-tab={value}>
            {label}
          </button>
        ))}
      </div>
      {tab === 'funding' ? <Funding /> : tab === 'tickers' ? <Tickers /> : <Whales />}
    </section>
  )
}

/** Rows a page of a market table shows: every symbol on one page was a 14,000 px page on a phone. */
const MARKET_PAGE_ROWS = 50

function Funding() {
  const rates = useAsync(() => api.fundingRates(), [])
  const [filter, setFilter] = useState('')
  const [byRate, setByRate] = useState(true)
  const matching = (rates.data ?? [])
    .filter((r) => r.symbol.includes(filter.toUpperCase()))
    .sort((a, b) => (byRate ? Math.abs(Number(b.fundingRate)) - Math.abs(Number(a.fundingRate)) : a.symbol.localeCompare(b.symbol)))
  const paging = usePages(matching, MARKET_PAGE_ROWS)
  if (rates.error) return <ErrorBox error={rates.error} />
  if (!rates.data) return <Loading what="funding rates" />
  const rows = paging.rows
  return (
    <>
      <div class="toolbar">
        <input type="search" placeholder="Filter symbols" aria-label="Filter symbols" value={filter} onInput={(e) => (setFilter(e.currentTarget.value), paging.setPage(0))} />
        <label class="check">
          <input type="checkbox" checked={byRate} onChange={(e) => (setByRate(e.currentTarget.checked), paging.setPage(0))} /> largest |rate| first
        </label>
        <button type="button" onClick={rates.reload}>
          Refresh
        </button>
      </div>
      <TableWrap>
        <table class="funding" data-testid="funding-table">
          <thead>
            <tr>
              <th>Symbol</th>
              <th class="num" title="Positive: longs pay shorts; negative: shorts pay longs">Funding rate (+ longs pay)</th>
              <th class="num" title="The rate times the symbol's fundings per year (its own interval: 8 h, or 4 h or 1 h for many symbols)">
                Annualised
              </th>
              <th class="num" data-key="interval" title="How often the symbol pays funding: the annualised rate counts that many fundings a year">
                Every
              </th>
              <th class="num secondary">Mark price</th>
              <th class="secondary" title={EXCHANGE_CLOCK}>
                Next funding
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.symbol} data-symbol={r.symbol} data-rate={r.fundingRate}>
                <td>{r.symbol}</td>
                <td class={`num ${sign(r.fundingRate)}`}>{pct(r.fundingRate, 4)}</td>
                <td class="num" data-key="annualized">{pct(r.annualizedRate, 1)}</td>
                <td class="num" data-interval-hours={r.fundingIntervalHours ?? undefined}>
                  {r.fundingIntervalHours === null ? '—' : `${r.fundingIntervalHours} h`}
                </td>
                <td class="num secondary">{r.markPrice}</td>
                <td class="secondary">{time(r.nextFundingTime)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <p class="hint">
        {matching.length} symbols{filter ? ` matching "${filter.toUpperCase()}"` : ''}
      </p>
      <Pager state={paging} testId="funding" />
    </>
  )
}

function VolumeFilter({ value, onChange }: { value: number; onChange: (v: number) => void }) {
  return (
    <label>
      Min 24 h quote volume
      <select value={value} onChange={(e) => onChange(Number(e.currentTarget.value))}>
        {[1e6, 1e7, 5e7, 1e8, 5e8, 1e9].map((v) => (
          <option key={v} value={v}>
            {compact(v)}
          </option>
        ))}
      </select>
    </label>
  )
}

function Tickers() {
  const [min, setMin] = useState(1e8)
  const tickers = useAsync(() => api.activeTickers(min), [min])
  const paging = usePages(tickers.data ?? [], MARKET_PAGE_ROWS)
  return (
    <>
      <div class="toolbar">
        <VolumeFilter value={min} onChange={setMin} />
        <button type="button" onClick={tickers.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={tickers.error} />
      {!tickers.data ? (
        tickers.error ? null : <Loading what="tickers" />
      ) : (
        <TableWrap>
          <table data-testid="tickers-table">
            <thead>
              <tr>
                <th>Symbol</th>
                <th class="num">Last</th>
                <th class="num">24 h change</th>
                <th class="num">High</th>
                <th class="num">Low</th>
                <th class="num">Quote volume</th>
                <th class="num">Trades</th>
              </tr>
            </thead>
            <tbody>
              {paging.rows.map((t) => (
                <tr key={t.symbol} data-symbol={t.symbol} data-quote-volume={t.quoteVolume}>
                  <td>{t.symbol}</td>
                  <td class="num">{t.lastPrice}</td>
                  <td class={`num ${sign(t.priceChangePercent)}`}>{num(t.priceChangePercent)} %</td>
                  <td class="num">{t.highPrice}</td>
                  <td class="num">{t.lowPrice}</td>
                  <td class="num">{compact(t.quoteVolume)}</td>
                  <td class="num">{compact(t.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager state={paging} testId="tickers" />
      {tickers.data?.length === 0 ? <p class="muted">No symbol trades that much.</p> : null}
    </>
  )
}

function Whales() {
  const [min, setMin] = useState(5e7)
  const board = useAsync(() => api.whaleBoard(min), [min])
  const paging = usePages(board.data?.rows ?? [], MARKET_PAGE_ROWS)
  return (
    <>
      <div class="toolbar">
        <VolumeFilter value={min} onChange={setMin} />
        <button type="button" onClick={board.reload}>
          Refresh
        </button>
        {board.data ? <span class="muted">generated {time(board.data.generatedAt)}</span> : null}
      </div>
      <p class="hint">Whales are Binance's top traders; the ratio is their long/short position ratio, the score how lopsided they are weighted by liquidity.</p>
      <ErrorBox error={board.error} />
      {!board.data ? (
        board.error ? null : <Loading what="the whale board" />
      ) : (
        <TableWrap>
          <table data-testid="whale-table">
            <thead>
              <tr>
                <th>Symbol</th>
                <th class="num">Whale long/short</th>
                <th>Leaning</th>
                <th class="num">Quote volume</th>
                <th class="num">Score</th>
              </tr>
            </thead>
            <tbody>
              {paging.rows.map((r) => (
                <tr key={r.symbol} data-symbol={r.symbol} data-score={r.score}>
                  <td>{r.symbol}</td>
                  <td class="num">{num(r.whaleLongShort, 3)}</td>
                  <td>{Number(r.whaleLongShort) > 1 ? <span class="badge long">long</span> : Number(r.whaleLongShort) < 1 ? <span class="badge short">short</span> : 'even'}</td>
                  <td class="num">{compact(r.quoteVolume)}</td>
                  <td class="num">{num(r.score, 2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager state={paging} testId="whales" />
    </>
  )
}
