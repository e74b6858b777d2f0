import { bollingerBreakout } from './bollinger-breakout.js'
import { crossSectionalMomentum } from './cross-sectional-momentum.js'
import { donchianBreakout } from './donchian-breakout.js'
import { emaCross } from './ema-cross.js'
import { fundingCarry } from './funding-carry.js'
import { macd } from './macd.js'
import { rsiReversion } from './rsi-reversion.js'
import { smaCross } from './sma-cross.js'
import type { TemplateInfo } from './schemas.js'
import type { Template } from './types.js'

/** Every template, in the order GET /v1/templates lists them. */
export const TEMPLATES: readonly Template[] = [
  smaCross,
  emaCross,
  rsiReversion,
  bollingerBreakout,
  donchianBreakout,
  macd,
  fundingCarry,
  crossSectionalMomentum,
] as Template[]

const BY_ID = new Map(TEMPLATES.map((template) => [template.id, template]))

/** The template with this id, or undefined. */
export function findTemplate(id: string): Template | undefined {
  return BY_ID.get(id)
}

/** Every template as GET /v1/templates lists it: params JSON schema, defaults, minimum capital. */
export function listTemplates(): TemplateInfo[] {
  return TEMPLATES.map((template) => ({
    id: template.id,
    description: template.description,
    multi_symbol: template.multiSymbol,
    min_symbols: template.multiSymbol ? template.minSymbols : 1,
    max_symbols: template.multiSymbol ? null : 1,
    min_capital: String(template.minCapital),
    params_schema: template.schema as unknown as Record<string, unknown>,
    defaults: defaultsOf(template),
  }))
}

/** The params a template runs with when none are given. */
export function defaultsOf(template: Template): Record<string, unknown> {
  const defaults: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(template.schema.properties as Record<string, { default?: unknown }>)) {
    defaults[name] = property.default
  }
  return defaults
}
