-- Issue 34, budgets that fit the work: the upload's smoke run measured per bar (µs of wall time in the
-- sandbox thread, engine and module together); a job's strategy-time budget is derived from it. Null for
-- versions stored before: they keep the flat budget.
ALTER TABLE custom_template_versions ADD COLUMN smoke_us_per_bar double precision;
