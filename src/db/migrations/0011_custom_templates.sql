-- Custom templates (issue 22): users' own strategy modules, inspected by the sandbox before they are
-- stored (src/custom-templates/). A template is a name over numbered versions; each version is
-- immutable, so a job or a run that pinned one always finds the code it ran.

-- deleted_at: a soft delete. Jobs and strategies that named the template keep a record of what it was;
-- a deleted template is invisible to its owner's API and no longer counts against the 50-template limit.
CREATE TABLE custom_templates (
  id             text PRIMARY KEY,
  user_id        integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name           text NOT NULL,
  description    text,
  latest_version integer NOT NULL CHECK (latest_version >= 1),
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  deleted_at     timestamptz
);
-- The owner's listing, oldest first.
CREATE INDEX custom_templates_user_idx ON custom_templates (user_id, created_at, id) WHERE deleted_at IS NULL;

-- source: what the user uploaded; code: what the sandbox evaluates (types stripped, lines kept) and
-- sha256 its hash. The rest is what inspecting the module found (sandbox/contract.ts ModuleDescription).
CREATE TABLE custom_template_versions (
  template_id   text NOT NULL REFERENCES custom_templates (id) ON DELETE CASCADE,
  version       integer NOT NULL CHECK (version >= 1),
  language      text NOT NULL CHECK (language IN ('javascript', 'typescript')),
  source        text NOT NULL,
  code          text NOT NULL,
  sha256        text NOT NULL,
  params_schema jsonb NOT NULL,
  defaults      jsonb NOT NULL,
  multi_symbol  boolean NOT NULL,
  warmup        integer NOT NULL CHECK (warmup >= 0),
  has_validate  boolean NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (template_id, version)
);

-- The version of a custom template a signed strategy runs; null for built-in templates.
ALTER TABLE strategies ADD COLUMN template_version integer CHECK (template_version >= 1);
