import type { BacktestTrade } from '../../api/types.js'
import { TableWrap } from '../../components/async.js'
import { EXIT_STYLE } from '../../charts/trade-markers.js'
import { Pager, usePages } from '../../components/pager.js'
import { useBaseAssets, usePriceDecimals } from '../../api/symbol-rules.js'
import { num, price, QUOTE, sign, time } from '../../format.js'

/**
 * Every closed trade of a result, a page of 100 at a time; rows carry the API's exact values in data-*
 * attributes. On a phone the secondary columns give way, so side, entry and PnL stay in sight, and the
 * exit reason too in a run with protective exits (`protective`), where it says which level closed the trade.
 */
export function TradesTable({ trades, protective = false }: { trades: BacktestTrade[]; protective?: boolean }) {
  const paging = usePages(trades)
  const rows = paging.rows
  const decimals = usePriceDecimals(rows.map((t) => t.symbol))
  const base = useBaseAssets(rows.map((t) => t.symbol))
  return (
    <div data-testid="trades" data-trade-count={trades.length}>
      <TableWrap>
        <table data-testid="trades-table">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>Side</th>
              <th class="secondary">Symbol</th>
              <th>Entry</th>
              <th class="num secondary">Entry price</th>
              <th class="secondary">Exit</th>
              <th class="num secondary">Exit price</th>
              <th class="num secondary" title="In the symbol's base asset">Qty</th>
              <th class="num secondary">Fee ({QUOTE})</th>
              <th class="num secondary" title="Funding paid during the trade: positive is paid, negative received">
                Funding ({QUOTE}, + paid)
              </th>
              <th class="num" data-key="pnl" title="Net of fees and funding">
                PnL ({QUOTE})
              </th>
              <th class={protective ? undefined : 'secondary'}>Exit reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr
                key={t.id}
                data-trade-id={t.id}
                data-side={t.side}
                data-symbol={t.symbol}
                data-entry-time={t.entry_time}
                data-entry-price={t.entry_price}
                data-exit-time={t.exit_time}
                data-exit-price={t.exit_price}
                data-qty={t.qty}
                data-fee={t.fee}
                data-pnl={t.pnl}
                data-exit-reason={t.exit_reason}
              >
                <td class="num">{t.id}</td>
                <td>
                  <span class={`badge ${t.side === 'buy' ? 'long' : 'short'}`}>{t.side === 'buy' ? 'long' : 'short'}</span>
                </td>
                <td class="secondary">{t.symbol}</td>
                <td>{time(t.entry_time)}</td>
                <td class="num secondary">{price(t.entry_price, decimals(t.symbol))}</td>
                <td class="secondary">{time(t.exit_time)}</td>
                <td class="num secondary">{price(t.exit_price, decimals(t.symbol))}</td>
                <td class="num secondary">{quantity(t.qty, base(t.symbol))}</td>
                <td class="num secondary">{num(t.fee)}</td>
                <td class="num secondary">{num(t.funding)}</td>
                <td class={`num ${sign(t.pnl)}`}>{num(t.pnl)}</td>
                <td class={protective ? undefined : 'secondary'}>{t.exit_reason ? <span class={`reason ${t.exit_reason}`} style={{ color: EXIT_STYLE[t.exit_reason]?.color }}>{t.exit_reason.replace('_', ' ')}</span> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {trades.length === 0 ? <p class="muted">No closed trades.</p> : null}
      <Pager state={paging} testId="trades" />
    </div>
  )
}

/** A quantity with its unit (the base asset, "0.012 BTC"), as the API wrote it. */
function quantity(qty: string, unit: string | undefined): string {
  return unit ? `${qty} ${unit}` : qty
}
