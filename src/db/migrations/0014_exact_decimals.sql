-- Issue 21: decimals written before every one went through src/http/decimals.ts carry binary-float noise
-- ("106519.20000000001", "-3.6744833999999185"). Rounded to 8 places, trailing zeros dropped, the noise goes
-- and every real digit stays: prices and quantities have fewer places (their tick and step), and money is
-- kept at 8 from now on. Only rows with more than 8 places change. Payloads already sent are not rewritten.
UPDATE strategy_orders
SET target = trim_scale(round(target, 8)), qty = trim_scale(round(qty, 8)), price = trim_scale(round(price, 8)), fee = trim_scale(round(fee, 8))
WHERE scale(target) > 8 OR scale(qty) > 8 OR scale(price) > 8 OR scale(fee) > 8;

UPDATE strategy_trades
SET entry_price = trim_scale(round(entry_price, 8)), exit_price = trim_scale(round(exit_price, 8)), qty = trim_scale(round(qty, 8)),
    fee = trim_scale(round(fee, 8)), funding = trim_scale(round(funding, 8)), pnl = trim_scale(round(pnl, 8))
WHERE scale(entry_price) > 8 OR scale(exit_price) > 8 OR scale(qty) > 8 OR scale(fee) > 8 OR scale(funding) > 8 OR scale(pnl) > 8;

UPDATE strategies SET stat_total_pnl = trim_scale(round(stat_total_pnl, 8)) WHERE scale(stat_total_pnl) > 8;
