-- Issue 35, params in the author's order: jsonb keeps an object's keys sorted by length then bytes, so a
-- module declaring lookback, atr_period, stop_atr, risk came back as risk, lookback, stop_atr, atr_period
-- in every answer. json keeps the text as written, key order included, and every column below is written
-- by the service in declared order (a schema's properties as the module declared them; resolved params
-- built from that schema). Nothing queries inside these columns but the sweep's slice of configurations
-- (sweeps/queries.ts, json_array_elements). Rows written before keep the order jsonb gave them.
ALTER TABLE custom_template_versions ALTER COLUMN params_schema TYPE json USING params_schema::json;
ALTER TABLE custom_template_versions ALTER COLUMN defaults TYPE json USING defaults::json;
ALTER TABLE strategies ALTER COLUMN params TYPE json USING params::json;
ALTER TABLE strategy_runs ALTER COLUMN params TYPE json USING params::json;
ALTER TABLE backtest_jobs ALTER COLUMN config TYPE json USING config::json;
ALTER TABLE backtest_sweeps ALTER COLUMN config TYPE json USING config::json;
ALTER TABLE backtest_sweeps ALTER COLUMN configurations TYPE json USING configurations::json;
ALTER TABLE backtest_sweep_runs ALTER COLUMN params TYPE json USING params::json;
