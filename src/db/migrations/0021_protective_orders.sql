-- Issue 31, live runs hold their protection on the exchange: each protective (algo) order a live run means to
-- place is a row committed before it is sent (as strategy_orders for plain orders), under a deterministic
-- client_algo_id pa-<strategy hex>-<s|t|r|m><seq> that is never sent twice. kind: stop_loss, take_profit,
-- trailing_stop; type: STOP_MARKET, TAKE_PROFIT_MARKET, TRAILING_STOP_MARKET, or MARKET (the alarm's close
-- of the position when a level could not rest: a plain reduce-only order under the same id scheme).
-- status: intent (committed, not yet answered), open, unknown (sent, outcome not known yet: looked up,
-- never resent), canceled, triggered, finished, expired, rejected.
CREATE TABLE protective_orders (
  client_algo_id text PRIMARY KEY,
  strategy_id text NOT NULL,
  run integer NOT NULL,
  seq integer NOT NULL,
  symbol text NOT NULL,
  kind text NOT NULL,
  type text NOT NULL,
  side text NOT NULL,
  trigger_price numeric,
  quantity numeric,
  close_position boolean NOT NULL DEFAULT false,
  working_type text NOT NULL,
  activate_price numeric,
  callback_rate numeric,
  status text NOT NULL,
  algo_id bigint,
  last_error text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (strategy_id, seq)
);
-- The run's orders that may still rest (what a sync diffs against, what the positions answer shows).
CREATE INDEX protective_orders_active ON protective_orders (strategy_id, symbol) WHERE status IN ('intent', 'open', 'unknown');
