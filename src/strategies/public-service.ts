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

export async function changePublicStrategy(db: Db, id: number, input: PublicStrategyUpdate): Promise<PublicStrategy> {
  if (id < 1 || id > MAX_ID) throw new PublicDetailError('NOT_FOUND', NOT_FOUND)
  return db.transaction().execute(async (trx) => {
    const current = await findPublicStrategy(trx, id)
    if (!current) throw new PublicDetailError('NOT_FOUND', NOT_FOUND)
    if (input.name !== undefined && input.name !== current.name) {
      throw new PublicDetailError('INVALID_PARAMETER', 'name cannot be changed')
    }
    const updated = await updatePublicStrategy(trx, id, input)
    if (!updated) throw new PublicDetailError('NOT_FOUND', NOT_FOUND)
    return updated
  })
}
