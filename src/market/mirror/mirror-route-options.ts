import { Type } from 'typebox'
import { DetailSchema, ValidationErrorSchema } from '../schemas.js'

/** What every mirror route shares: public access and its error answers. */
export const mirrorConfig = { access: { kind: 'public' as const } }

const ExchangeErrorSchema = Type.Object({ code: Type.Integer(), msg: Type.String() }, { description: 'The exchange’s refusal, forwarded unchanged' })

export const mirrorErrors = { 400: ExchangeErrorSchema, 422: ValidationErrorSchema, 502: DetailSchema }

/** Marks, in the OpenAPI document, the mirror endpoints the spec does not list. */
export const ADDITION =
  'Our addition beyond the spec: Binance’s public USD-M endpoint of the same path, parameters and answer, ' +
  'served from Perpetua’s cache (request coalescing, TTLs in docs/decisions/market-data.md) within the shared upstream weight budget.'
export const additionTags = ['market data (Binance mirror, our additions)']
