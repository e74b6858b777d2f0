import type { Db } from '../db/connect.js'
import { findOrCreateUserByEmail } from '../auth/queries.js'

/** A paper wallet's balance: a non-negative decimal of at most 18 integer and 18 fractional digits. */
export function parsePaperAmount(value: unknown): string {
  const amount = String(value ?? '').trim()
  if (!/^(0|[1-9]\d{0,17})(\.\d{1,18})?$/.test(amount)) throw new Error('--amount must be a decimal of at least 0 (USDT), such as 25000 or 1500.5')
  return amount
}

/**
 * `perpetua users set-paper-balance`: sets the user's dry-run wallet (created if needed). Runs already
 * deployed keep their capital; the new balance counts for the next deploy's 402 check (DESIGN §6).
 */
export async function setPaperBalance(db: Db, email: string, amount: string): Promise<{ email: string; user_id: number; paper_balance: string }> {
  const userId = await findOrCreateUserByEmail(db, email)
  const row = await db.updateTable('users').set({ paper_balance: amount }).where('id', '=', userId).returning('paper_balance').executeTakeFirstOrThrow()
  return { email, user_id: userId, paper_balance: String(row.paper_balance) }
}
