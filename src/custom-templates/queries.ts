import type { Insertable, Selectable } from 'kysely'
import type { Db } from '../db/connect.js'
import type { CustomTemplatesTable, CustomTemplateVersionsTable } from '../db/schema.js'
import { isCustomTemplateId } from './ids.js'
import { moduleFileName } from './sandbox/module-file-name.js'
import type { CompiledModule, ModuleDescription, ModuleParamsSchema } from './sandbox/contract.js'

export type CustomTemplateRow = Selectable<CustomTemplatesTable>
export type CustomVersionRow = Selectable<CustomTemplateVersionsTable>

/** The version columns the API shows beside the template's. */
const VERSION_FIELDS = ['version', 'language', 'sha256', 'params_schema', 'defaults', 'multi_symbol', 'warmup'] as const
/** A template with one of its versions, as the API shows it. */
export type TemplateView = CustomTemplateRow & Pick<CustomVersionRow, (typeof VERSION_FIELDS)[number]>

/** A stored version ready to run: what backtests and strategy runs load. */
export interface CustomTemplateVersion {
  id: string
  version: number
  name: string
  compiled: CompiledModule
  description: ModuleDescription
}

/** A version's number is an int4 column: a larger one is not there (and would make PostgreSQL fail). */
const isVersionNumber = (version: number): boolean => Number.isInteger(version) && version >= 1 && version <= 2_147_483_647

/**
 * A live template of this user joined with one version (default: the latest); undefined for ids not of our
 * form. `pinned`: a deleted template's version too (a queued job or a run recorded which code it runs).
 */
function liveVersion(db: Db, userId: number, id: string, version: number | undefined, pinned = false) {
  if (!isCustomTemplateId(id) || (version !== undefined && !isVersionNumber(version))) return undefined
  const query = db
    .selectFrom('custom_templates as t')
    .innerJoin('custom_template_versions as v', (join) =>
      join.onRef('v.template_id', '=', 't.id').on((eb) => eb('v.version', '=', version ?? eb.ref('t.latest_version'))),
    )
    .where('t.id', '=', id)
    .where('t.user_id', '=', userId)
  return pinned && version !== undefined ? query : query.where('t.deleted_at', 'is', null)
}

/**
 * The version (default: the latest) of a live custom template of this user with its template's name;
 * undefined when the template is missing, deleted or another user's, or has no such version. `pinned`
 * (with a version): a deleted template's version too, for the job or run that pinned it.
 */
export async function findCustomVersion(db: Db, userId: number, id: string, version?: number, pinned = false): Promise<CustomTemplateVersion | undefined> {
  const row = await liveVersion(db, userId, id, version, pinned)
    ?.select(['t.id', 't.name', 'v.version', 'v.language', 'v.code', 'v.sha256', 'v.params_schema', 'v.defaults', 'v.multi_symbol', 'v.warmup', 'v.has_validate', 'v.smoke_us_per_bar'])
    .executeTakeFirst()
  if (!row) return undefined
  return {
    id: row.id,
    version: row.version,
    name: row.name,
    compiled: { code: row.code, sha256: row.sha256, file: moduleFileName(row.name, row.language) },
    description: {
      paramsSchema: row.params_schema as unknown as ModuleParamsSchema,
      defaults: row.defaults,
      multiSymbol: row.multi_symbol,
      warmup: row.warmup,
      hasValidate: row.has_validate,
      ...(row.smoke_us_per_bar !== null ? { smokeUsPerBar: row.smoke_us_per_bar } : {}),
    },
  }
}

/** A live template of this user with one version (default: the latest) and that version's source. */
export async function findTemplateView(db: Db, userId: number, id: string, version?: number): Promise<(TemplateView & { source: string }) | undefined> {
  return liveVersion(db, userId, id, version)
    ?.selectAll('t')
    .select([...VERSION_FIELDS.map((column) => `v.${column}` as const), 'v.source'])
    .executeTakeFirst()
}

/** A live template of this user with its latest version's language (what an upload keeps by default). */
export async function findTemplateHead(db: Db, userId: number, id: string): Promise<(CustomTemplateRow & Pick<CustomVersionRow, 'language'>) | undefined> {
  return liveVersion(db, userId, id, undefined)?.selectAll('t').select('v.language').executeTakeFirst()
}

/** Locks the user's row (concurrent creates take turns) and counts their live templates. */
export async function lockUserAndCountTemplates(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow()
  return countTemplates(trx, userId)
}

/** The user's live templates. */
export async function countTemplates(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('custom_templates')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

export async function insertTemplate(db: Db, row: Insertable<CustomTemplatesTable>): Promise<CustomTemplateRow> {
  return db.insertInto('custom_templates').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function insertVersion(
  db: Db,
  row: Omit<CustomVersionRow, 'params_schema' | 'defaults'> & { params_schema: ModuleParamsSchema; defaults: Record<string, number | boolean> },
): Promise<Pick<CustomVersionRow, (typeof VERSION_FIELDS)[number]>> {
  return db
    .insertInto('custom_template_versions')
    .values({ ...row, params_schema: JSON.stringify(row.params_schema), defaults: JSON.stringify(row.defaults) })
    .returning(VERSION_FIELDS)
    .executeTakeFirstOrThrow()
}

/** A live template of this user; `forUpdate` locks it, so new versions and deletes take turns. */
export async function findTemplate(db: Db, userId: number, id: string, forUpdate = false): Promise<CustomTemplateRow | undefined> {
  if (!isCustomTemplateId(id)) return undefined
  const query = db.selectFrom('custom_templates').selectAll().where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

/** Every version of a template, oldest first. */
export async function listVersions(db: Db, templateId: string): Promise<Pick<CustomVersionRow, 'version' | 'sha256' | 'created_at'>[]> {
  return db.selectFrom('custom_template_versions').select(['version', 'sha256', 'created_at']).where('template_id', '=', templateId).orderBy('version').execute()
}

/** The user's live templates with their latest versions, oldest first. */
export async function listLatest(db: Db, userId: number): Promise<TemplateView[]> {
  return db
    .selectFrom('custom_templates as t')
    .innerJoin('custom_template_versions as v', (join) => join.onRef('v.template_id', '=', 't.id').onRef('v.version', '=', 't.latest_version'))
    .selectAll('t')
    .select(VERSION_FIELDS.map((column) => `v.${column}` as const))
    .where('t.user_id', '=', userId)
    .where('t.deleted_at', 'is', null)
    .orderBy('t.created_at')
    .orderBy('t.id')
    .execute()
}

export async function updateTemplate(
  db: Db,
  id: string,
  changes: Partial<Pick<CustomTemplateRow, 'name' | 'description' | 'latest_version' | 'updated_at' | 'deleted_at'>>,
): Promise<CustomTemplateRow> {
  return db.updateTable('custom_templates').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/** Whether a deployed strategy of this user runs this template. */
export async function deployedStrategyUses(db: Db, userId: number, templateId: string): Promise<boolean> {
  const row = await db
    .selectFrom('strategies')
    .select('id')
    .where('user_id', '=', userId)
    .where('template_id', '=', templateId)
    .where('status', '=', 'deployed')
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  return row !== undefined
}

/** The user's deployed strategies of custom templates (each holds a sandbox thread somewhere). */
export async function deployedCustomStrategies(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('strategies')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', '=', 'deployed')
    .where('template_id', 'like', 'tpl-%')
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}
