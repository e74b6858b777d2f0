import { useEffect, useState } from 'preact/hooks'
import { api } from '../api/endpoints.js'
import { time } from '../format.js'
import { EXCHANGE_CLOCK } from './clocks.js'

/** The exchange's clock counts as ours when the two are within this much. */
const SAME_CLOCK_MS = 60_000
/** How often the exchange's time is read again (GET /fapi/v1/time, through the mirror). */
const READ_EVERY_MS = 10_000

/**
 * The exchange's current time, shown only when it is not ours (the replay exchange replays a recorded
 * past, at its own speed): order, fill and position times on the page are on that clock, so the page says
 * where "now" is on it. Read again every 10 s; nothing is shown until the first answer, or when it fails.
 */
export function ExchangeClock() {
  const [exchangeNow, setExchangeNow] = useState<number | undefined>(undefined)
  useEffect(() => {
    let live = true
    const read = () =>
      api.marketTime().then(
        ({ serverTime }) => live && setExchangeNow(serverTime),
        () => undefined,
      )
    void read()
    const timer = setInterval(() => void read(), READ_EVERY_MS)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [])
  if (exchangeNow === undefined || Math.abs(exchangeNow - Date.now()) < SAME_CLOCK_MS) return null
  return (
    <div title={EXCHANGE_CLOCK} data-clock="exchange" data-testid="exchange-clock" data-value={exchangeNow}>
      <dt>Exchange time now</dt>
      <dd>{time(exchangeNow)}</dd>
    </div>
  )
}
