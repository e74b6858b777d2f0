-- Runs of custom templates (issue 22): a run pins the version of the module it runs (a running strategy keeps
-- its version whatever is uploaded meanwhile) and the seed of the module's Math.random. Null for built-ins.
ALTER TABLE strategy_runs ADD COLUMN template_version integer CHECK (template_version >= 1);
ALTER TABLE strategy_runs ADD COLUMN seed integer;
