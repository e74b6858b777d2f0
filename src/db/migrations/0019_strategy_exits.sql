-- Issue 30, protective exits: a strategy's exits as the trader wrote them (src/strategies/exits.ts:
-- decimal strings stop_loss, take_profit, trailing_stop, trailing_activation, trigger), null for none.
-- A backtest with strategy_id and a dry run of the strategy read the same object.
ALTER TABLE strategies ADD COLUMN exits jsonb;
