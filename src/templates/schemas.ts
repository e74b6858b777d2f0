import { type Static, Type } from 'typebox'

export const TemplateSchema = Type.Object({
  id: Type.String({ description: 'The template_id of strategies and backtests', examples: ['sma_cross'] }),
  description: Type.String(),
  multi_symbol: Type.Boolean({ description: 'Whether the template takes several symbols' }),
  min_symbols: Type.Integer(),
  max_symbols: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no upper bound' }),
  min_capital: Type.String({ description: 'Smallest capital (decimal, quote currency) to deploy or backtest with' }),
  params_schema: Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON Schema of params: every field with its type, bounds and default; unknown fields are refused',
  }),
  defaults: Type.Record(Type.String(), Type.Unknown(), { description: 'The params used for fields left out' }),
})
export type TemplateInfo = Static<typeof TemplateSchema>
