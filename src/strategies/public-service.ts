import type { Db } from '../db/connect.js'
import { isUniqueViolation } from '../db/errors.js'
import { PublicDetailError } from '../http/error-handler.js'
import type { PublicStrategy, PublicStrategyCreate, PublicStrategyUpdate } from './public-schemas.js'
import { findPublicStrategy, insertPublicStrategy, updatePublicStrategy } from './public-queries.js'

/** The original service's wording, kept verbatim: "strategy name already exists", "strategy not found". */
const NAME_TAKEN = '策略名称已存在'
const NOT_FOUND = '策略不存在'

/** Ids beyond PostgreSQL's integer range cannot exist. */
const MAX_ID = 2_147_483_647

export async function createPublicStrategy(db: Db, input: PublicStrategyCreate): Promise<PublicStrategy> {
  try {
    return await insertPublicStrategy(db, input)
  } catch (error) {
    if (isUniqueViolation(error)) throw new PublicDetailError('INVALID_PARAMETER', NAME_TAKEN, `a strategy named "${input.name}" already exists`)
    throw error
  }
}

export async function getPublicStrategy(db: Db, id: number): Promise<PublicStrategy> {
  const found = id >= 1 && id <= MAX_ID ? await findPublicStrategy(db, id) : undefined
  if (!found) throw new PublicDetailError('NOT_FOUND', NOT_FOUND)
  return found
}

/** PUT: the editable fields only; a name, id or timestamps in the body are ignored (the record as read may come back whole). */
export async function changePublicStrategy(db: Db, id: number, input: PublicStrategyUpdate): Promise<PublicStrategy> {
  const updated = id >= 1 && id <= MAX_ID ? await updatePublicStrategy(db, id, input) : undefined
  if (!updated) throw new PublicDetailError('NOT_FOUND', NOT_FOUND)
  return updated
}
