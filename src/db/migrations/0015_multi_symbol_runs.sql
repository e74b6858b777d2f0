-- Runs that hold several symbols (issue 21): a run of a many-symbol template trades every symbol of its
-- strategy on one ledger. `symbols` lists them in the strategy's order (the ledger's symbol index);
-- `symbol` stays the first of them, so one-symbol readers and rows written before this are unchanged.
ALTER TABLE strategy_runs ADD COLUMN symbols text[];
UPDATE strategy_runs SET symbols = ARRAY[symbol];
ALTER TABLE strategy_runs ALTER COLUMN symbols SET NOT NULL;
ALTER TABLE strategy_runs ADD CONSTRAINT strategy_runs_symbols_check CHECK (cardinality(symbols) >= 1 AND symbols[1] = symbol);
