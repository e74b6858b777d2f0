import type { Db } from '../db/connect.js'
import { customTemplateBounds } from './sandbox/custom-template.js'
import { AppError, invalidParameter, notFound } from '../http/errors.js'
import { listTemplates as listBuiltIns } from '../templates/registry.js'
import { newCustomTemplateId } from './ids.js'
import { SANDBOX_LIMITS } from './sandbox/limits.js'
import { moduleFileName } from './sandbox/module-file-name.js'
import {
  countTemplates,
  deployedStrategyUses,
  findTemplate,
  findTemplateHead,
  findTemplateView,
  insertTemplate,
  insertVersion,
  listLatest,
  listVersions,
  lockUserAndCountTemplates,
  type TemplateView,
  updateTemplate,
} from './queries.js'
import type { ModuleDescription, ModuleLanguage, StrategySandbox } from './sandbox/contract.js'
import type { BuiltInTemplate, CustomTemplate, CustomTemplateCreate, CustomTemplateDetail, CustomTemplateUpdate } from './schemas.js'

export interface CustomTemplateContext {
  db: Db
  userId: number
  now: Date
  sandbox: StrategySandbox
}

// The built-ins never change while the process runs: listed once, answered from memory.
const BUILT_INS: readonly BuiltInTemplate[] = listBuiltIns().map((template) => ({ ...template, custom: false as const }))
const BUILT_IN_BY_ID = new Map(BUILT_INS.map((template) => [template.id, template]))


/** The built-in templates, then the caller's own when `custom` (latest versions, oldest first); never another user's. */
export async function listAllTemplates({ db, userId }: CustomTemplateContext, options: { custom: boolean }): Promise<{ data: (BuiltInTemplate | CustomTemplate)[] }> {
  const own = options.custom ? await listLatest(db, userId) : []
  return { data: [...BUILT_INS, ...own.map(toCustomTemplate)] }
}

/** A built-in template, or one of the caller's with its source and versions (another user's is 404). */
export async function getAnyTemplate({ db, userId }: CustomTemplateContext, id: string, version?: number): Promise<BuiltInTemplate | CustomTemplateDetail> {
  const builtIn = BUILT_IN_BY_ID.get(id)
  if (builtIn) {
    if (version !== undefined) throw invalidParameter('version', `${id} is a built-in template: it has no versions`)
    return builtIn
  }
  const view = await findTemplateView(db, userId, id, version)
  if (!view) {
    if (version !== undefined && (await findTemplate(db, userId, id))) throw notFound(`version ${version} of template ${id}`)
    throw notFound(`template ${id}`)
  }
  const versions = await listVersions(db, view.id)
  return {
    ...toCustomTemplate(view),
    source: view.source,
    versions: versions.map((row) => ({ version: row.version, sha256: row.sha256, created_at: row.created_at.toISOString() })),
  }
}

export async function createCustomTemplate(context: CustomTemplateContext, input: CustomTemplateCreate): Promise<CustomTemplate> {
  const { db, userId, now, sandbox } = context
  checkSourceSize(input.source)
  // Counted before the sandbox runs, so a caller at the limit costs no inspection; counted again under lock.
  checkTemplateCount(await countTemplates(db, userId))
  const language = input.language ?? 'javascript'
  const inspected = await sandbox.inspect(userId, input.source, language, moduleFileName(input.name, language))
  const view = await db.transaction().execute(async (trx) => {
    checkTemplateCount(await lockUserAndCountTemplates(trx, userId))
    const template = await insertTemplate(trx, {
      id: newCustomTemplateId(),
      user_id: userId,
      name: input.name,
      description: input.description ?? null,
      latest_version: 1,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    return { ...template, ...(await insertVersion(trx, versionRow(template.id, 1, language, input.source, inspected, now))) }
  })
  return toCustomTemplate(view)
}

/** Uploads a new version (inspected first); name and description change with it when given. */
export async function updateCustomTemplate(context: CustomTemplateContext, id: string, input: CustomTemplateUpdate): Promise<CustomTemplate> {
  const { db, userId, now, sandbox } = context
  checkSourceSize(input.source)
  refuseBuiltIn(id, 'changed')
  const current = await findTemplateHead(db, userId, id)
  if (!current) throw notFound(`template ${id}`)
  checkVersionCount(current.latest_version, id)
  const language = input.language ?? current.language
  const inspected = await sandbox.inspect(userId, input.source, language, moduleFileName(input.name ?? current.name, language))
  const view = await db.transaction().execute(async (trx) => {
    // Locked and read again: another upload or a delete may have committed while the sandbox ran.
    const locked = await findTemplate(trx, userId, id, true)
    if (!locked) throw notFound(`template ${id}`)
    const version = locked.latest_version + 1
    checkVersionCount(locked.latest_version, id)
    const stored = await insertVersion(trx, versionRow(id, version, language, input.source, inspected, now))
    const template = await updateTemplate(trx, id, {
      latest_version: version,
      updated_at: now,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    })
    return { ...template, ...stored }
  })
  return toCustomTemplate(view)
}

/**
 * Soft-deletes a template (its versions stay for the jobs and strategies that recorded them); refused
 * while a deployed strategy of the caller runs it.
 */
export async function deleteCustomTemplate({ db, userId, now }: CustomTemplateContext, id: string): Promise<void> {
  refuseBuiltIn(id, 'deleted')
  await db.transaction().execute(async (trx) => {
    const template = await findTemplate(trx, userId, id, true)
    if (!template) throw notFound(`template ${id}`)
    if (await deployedStrategyUses(trx, userId, id)) {
      throw new AppError('INVALID_STATE', `template ${id} is used by a deployed strategy; pause the strategy before deleting the template`)
    }
    await updateTemplate(trx, id, { deleted_at: now, updated_at: now })
  })
}

/** The API representation of a template at one version. */
function toCustomTemplate(view: TemplateView): CustomTemplate {
  const bounds = customTemplateBounds(view.multi_symbol)
  return {
    id: view.id,
    custom: true,
    name: view.name,
    description: view.description,
    version: view.version,
    language: view.language,
    sha256: view.sha256,
    params_schema: view.params_schema,
    defaults: view.defaults,
    warmup: view.warmup,
    multi_symbol: view.multi_symbol,
    min_symbols: bounds.minSymbols,
    max_symbols: bounds.maxSymbols,
    min_capital: String(bounds.minCapital),
    created_at: view.created_at.toISOString(),
    updated_at: view.updated_at.toISOString(),
  }
}

function versionRow(
  templateId: string,
  version: number,
  language: ModuleLanguage,
  source: string,
  { compiled, description }: { compiled: { code: string; sha256: string }; description: ModuleDescription },
  now: Date,
) {
  return {
    template_id: templateId,
    version,
    language,
    source,
    code: compiled.code,
    sha256: compiled.sha256,
    params_schema: description.paramsSchema,
    defaults: description.defaults,
    multi_symbol: description.multiSymbol,
    warmup: description.warmup,
    has_validate: description.hasValidate,
    smoke_us_per_bar: description.smokeUsPerBar ?? null,
    created_at: now,
  }
}

/** Built-in templates are part of the service: neither changed nor deleted through the API. */
function refuseBuiltIn(id: string, verb: string): void {
  if (BUILT_IN_BY_ID.has(id)) {
    throw new AppError('INVALID_STATE', `${id} is a built-in template and cannot be ${verb}; upload your own with POST /v1/templates`)
  }
}

function checkSourceSize(source: string): void {
  const bytes = Buffer.byteLength(source, 'utf8')
  if (bytes > SANDBOX_LIMITS.sourceBytes) {
    throw invalidParameter('source', `source is ${bytes} bytes of UTF-8; the limit is ${SANDBOX_LIMITS.sourceBytes} bytes (${SANDBOX_LIMITS.sourceBytes / 1024} KiB)`)
  }
}

function checkTemplateCount(count: number): void {
  if (count >= SANDBOX_LIMITS.templatesPerUser) {
    throw new AppError('LIMIT_REACHED', `this account already has ${count} custom templates; the limit is ${SANDBOX_LIMITS.templatesPerUser}. Delete one first`)
  }
}

function checkVersionCount(latest: number, id: string): void {
  if (latest >= SANDBOX_LIMITS.versionsPerTemplate) {
    throw new AppError('LIMIT_REACHED', `template ${id} already has ${latest} versions; the limit is ${SANDBOX_LIMITS.versionsPerTemplate}. Upload it as a new template`)
  }
}
