import { type Static, Type } from 'typebox'
import { IsoTimestamp } from '../http/common-schemas.js'
import { TemplateSchema } from '../templates/schemas.js'
import { SANDBOX_LIMITS } from './sandbox/limits.js'

export const MODULE_LANGUAGES = ['javascript', 'typescript'] as const

const CUSTOM_ID_PATTERN = '^tpl-[0-9a-f]{16}$'

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Your name for the template, 1 to 100 characters' }),
  source: Type.String({
    minLength: 1,
    description:
      `The module's text, at most ${SANDBOX_LIMITS.sourceBytes} bytes (${SANDBOX_LIMITS.sourceBytes / 1024} KiB) of UTF-8: \`export const params\`, \`warmup(p)\`, ` +
      '`create(p, ctx)` and optionally `validate(p)` and `multi_symbol = true` (the module contract of issue 22). ' +
      'It is loaded in the sandbox and checked (exports, params, warm-up, a smoke run) before anything is stored.',
  }),
  language: (fallback: string) =>
    Type.Enum(MODULE_LANGUAGES, { description: `typescript: types are stripped at upload, line numbers kept; default ${fallback}` }),
  description: Type.String({ maxLength: 1000, description: 'At most 1000 characters' }),
}

export const CustomTemplateCreateSchema = Type.Object(
  {
    name: fields.name,
    source: fields.source,
    language: Type.Optional(fields.language('javascript')),
    description: Type.Optional(fields.description),
  },
  { additionalProperties: false },
)
export type CustomTemplateCreate = Static<typeof CustomTemplateCreateSchema>

export const CustomTemplateUpdateSchema = Type.Object(
  {
    source: fields.source,
    language: Type.Optional(fields.language("the current version's language")),
    name: Type.Optional(fields.name),
    description: Type.Optional(Type.Union([fields.description, Type.Null()], { description: 'null removes it' })),
  },
  { additionalProperties: false, description: 'A new version: the source is required and inspected as at create; name and description change the template.' },
)
export type CustomTemplateUpdate = Static<typeof CustomTemplateUpdateSchema>

/** A built-in template as the listing and GET /v1/templates/{id} show it. */
export const BuiltInTemplateSchema = Type.Object(
  { ...TemplateSchema.properties, custom: Type.Literal(false, { description: 'A built-in template' }) },
  { title: 'BuiltInTemplate' },
)
export type BuiltInTemplate = Static<typeof BuiltInTemplateSchema>

export const CustomTemplateSchema = Type.Object(
  {
    id: Type.String({ pattern: CUSTOM_ID_PATTERN, description: 'The template_id of strategies and backtests: tpl- and 16 hex digits' }),
    custom: Type.Literal(true, { description: 'One of your own templates' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    version: Type.Integer({ minimum: 1, description: `This version's number: 1 at create, one more at each upload (at most ${SANDBOX_LIMITS.versionsPerTemplate})` }),
    language: Type.Enum(MODULE_LANGUAGES),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the code the sandbox runs (the source with types stripped)' }),
    params_schema: TemplateSchema.properties.params_schema,
    defaults: TemplateSchema.properties.defaults,
    warmup: Type.Integer({ minimum: 0, description: 'Closed bars the module reads before its first target, for the defaults' }),
    multi_symbol: TemplateSchema.properties.multi_symbol,
    min_symbols: TemplateSchema.properties.min_symbols,
    max_symbols: TemplateSchema.properties.max_symbols,
    min_capital: TemplateSchema.properties.min_capital,
    created_at: IsoTimestamp,
    updated_at: IsoTimestamp,
  },
  { title: 'CustomTemplate' },
)
export type CustomTemplate = Static<typeof CustomTemplateSchema>

export const TemplateVersionSchema = Type.Object({ version: Type.Integer({ minimum: 1 }), sha256: Type.String(), created_at: IsoTimestamp })
export type TemplateVersion = Static<typeof TemplateVersionSchema>

export const CustomTemplateDetailSchema = Type.Object(
  {
    ...CustomTemplateSchema.properties,
    source: Type.String({ description: 'The text uploaded for this version' }),
    versions: Type.Array(TemplateVersionSchema, { description: 'Every version, oldest first' }),
  },
  { title: 'CustomTemplateDetail' },
)
export type CustomTemplateDetail = Static<typeof CustomTemplateDetailSchema>

export const TemplateListSchema = Type.Object({
  data: Type.Array(Type.Union([BuiltInTemplateSchema, CustomTemplateSchema]), {
    description: `The built-in templates, then your own (latest versions, oldest first; at most ${SANDBOX_LIMITS.templatesPerUser})`,
  }),
})

export const TemplateDetailSchema = Type.Union([BuiltInTemplateSchema, CustomTemplateDetailSchema])

export const TemplateIdSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'A built-in id (sma_cross) or one of yours (tpl-…)' }),
})

export const TemplateGetQuerySchema = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: SANDBOX_LIMITS.versionsPerTemplate, description: 'An older version of a custom template; default the latest' })),
})
