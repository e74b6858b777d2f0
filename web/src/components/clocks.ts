/**
 * Two clocks show on the same pages: order, fill, position and funding times are the exchange's
 * (the time of the market event), record times (created_at, deployed_at, submitted, attempted) are
 * our server's. With the built-in replay exchange, which replays a recorded past, the two are months
 * apart (17 in the shipped data). Column headers and labels carry one of these as their tooltip.
 */
export const EXCHANGE_CLOCK = "Exchange time: the market event's own clock. The replay exchange replays a recorded past, so it can be months before the record times (deployed, created) on this page."
export const SERVER_CLOCK = "Our server's clock: when we recorded it. Order, fill and funding times are the exchange's clock, which the replay exchange sets in a recorded past."
