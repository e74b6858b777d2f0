/**
 * Strategy templates: params schemas and signal logic, shared by the backtest engine and the live runner.
 * Pure: no I/O, no clock, no randomness.
 */
export { TEMPLATES, defaultsOf, findTemplate, listTemplates } from './registry.js'
export { TemplateSchema, type TemplateInfo } from './schemas.js'
export { resolveParams, symbolsProblem, templateById, valueProblem } from './validate.js'
export type {
  Checked,
  MultiSymbolSignal,
  MultiSymbolTemplate,
  ParamProblem,
  SingleSymbolSignal,
  SingleSymbolTemplate,
  Template,
  TemplateContext,
} from './types.js'
