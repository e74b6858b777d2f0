import type { Db } from '../db/connect.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import { findCustomVersion } from '../custom-templates/queries.js'
import { detachedTemplate } from '../custom-templates/sandbox/run-sandbox.js'
import type { Template } from '../templates/types.js'
import { accepted } from '../http/errors.js'
import { templateById } from '../templates/validate.js'

/**
 * The template of a run where its module does not run (closing its position, carrying its ledger): a
 * built-in, or the custom template at the version the run pinned.
 */
export async function runTemplate(db: Db, run: { user_id: number; template_id: string; template_version: number | null }): Promise<Template> {
  if (!isCustomTemplateId(run.template_id)) return accepted(templateById(run.template_id))
  const found = await findCustomVersion(db, run.user_id, run.template_id, run.template_version ?? undefined, true)
  if (!found) throw new Error(`template ${run.template_id} version ${run.template_version} is gone`)
  return detachedTemplate(found)
}
