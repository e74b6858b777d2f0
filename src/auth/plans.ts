import { sql } from 'kysely'
import type { Db } from '../db/connect.js'
import { AppError } from '../http/errors.js'
import { parseUtcTime } from '../http/time.js'

/** The plans a user can hold (users.plan); Standard or better opens the plan-gated data endpoints. */
export const PLANS = ['free', 'standard', 'pro'] as const
export type Plan = (typeof PLANS)[number]

const DAY_MS = 86_400_000

export interface PlanState {
  plan: Plan
  /** null: no end date. */
  plan_expires_at: Date | null
}

/** Standard or pro, and not past its end date. */
export function isPlanActive(state: PlanState, now: number): boolean {
  return state.plan !== 'free' && (state.plan_expires_at === null || state.plan_expires_at.getTime() > now)
}

export function parsePlan(value: unknown): Plan {
  const plan = String(value ?? '').trim()
  if ((PLANS as readonly string[]).includes(plan)) return plan as Plan
  throw new Error(`--plan must be one of ${PLANS.join(', ')} (got "${plan}")`)
}

/**
 * The end of a plan from `--until`: a date alone (2026-12-31) keeps the plan through that whole UTC
 * day; a time (2026-12-31T12:00Z) ends it exactly then. Omitted: no end date. The free plan takes
 * none, and an end already past is refused (setting `--plan free` is how a plan ends now).
 */
export function parsePlanEnd(plan: Plan, until: unknown, now: number): Date | null {
  if (until === undefined || until === null || until === '') return null
  if (plan === 'free') throw new Error('--until applies to the standard and pro plans only; the free plan never expires')
  const text = String(until).trim()
  let end: number
  try {
    end = parseUtcTime(text, '--until') + (/^\d{4}-\d{2}-\d{2}$/.test(text) ? DAY_MS : 0)
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error))
  }
  if (end <= now) throw new Error(`--until ${text} is already past; use --plan free to end a plan now`)
  return new Date(end)
}

export interface PlanChange {
  id: number
  email: string
  plan: Plan
  /** ISO 8601 UTC, or null for no end date. */
  plan_expires_at: string | null
  active: boolean
  /** True when no user had this email: the plan then waits for their first sign-in or key. */
  created: boolean
}

/** Sets the plan of the user with `email`, creating the user when there is none. */
export async function setPlan(db: Db, email: string, plan: Plan, expiresAt: Date | null, now: number): Promise<PlanChange> {
  const row = await db
    .insertInto('users')
    .values({ email, idpa_id: null, idpb_id: null, plan, plan_expires_at: expiresAt })
    .onConflict((oc) => oc.column('email').doUpdateSet({ plan, plan_expires_at: expiresAt, updated_at: sql`now()` }))
    // xmax is 0 for a row this statement inserted, the updating transaction's id otherwise.
    .returning(['id', 'email', 'plan', 'plan_expires_at', sql<boolean>`(xmax = 0)`.as('created')])
    .executeTakeFirstOrThrow()
  return {
    id: row.id,
    email: row.email,
    plan: row.plan,
    plan_expires_at: row.plan_expires_at?.toISOString() ?? null,
    active: isPlanActive(row, now),
    created: row.created,
  }
}

/** Throws 403 PLAN_REQUIRED unless the user holds an active Standard-or-better plan. */
export async function requireActivePlan(db: Db, userId: number, now: number): Promise<void> {
  const state = await db.selectFrom('users').select(['plan', 'plan_expires_at']).where('id', '=', userId).executeTakeFirst()
  if (state && isPlanActive(state, now)) return
  const why =
    state && state.plan !== 'free' && state.plan_expires_at
      ? `the ${state.plan} plan of this account ended at ${state.plan_expires_at.toISOString()}`
      : 'this account has no paid plan'
  throw new AppError('PLAN_REQUIRED', `this endpoint needs an active Standard or Pro plan: ${why}`)
}
