import { issueApiKey } from '../auth/api-keys.js'
import { parsePlan, parsePlanEnd, type Plan, setPlan } from '../auth/plans.js'
import { parseScopes } from '../auth/scopes.js'
import type { Services } from '../services.js'
import type { CommandHandler } from './control-socket.js'

/** The operator commands that must run where the database is: in this process, or a running server. */
export function operatorCommands(services: Services): Record<string, CommandHandler> {
  return {
    'keys.create': async (args) => {
      const email = parseEmail(args.email)
      const scopes = parseScopes(String(args.scopes ?? ''))
      if (args.plan === undefined && args.until !== undefined) throw new Error('--until needs --plan')
      const plan = args.plan === undefined ? undefined : parsePlanArgs(args, services.now())
      const issued = await issueApiKey(services.database.db, services.secrets, { email, scopes })
      if (!plan) return issued
      const change = await setPlan(services.database.db, email.toLowerCase(), plan.plan, plan.end, services.now())
      return { ...issued, plan: change.plan, plan_expires_at: change.plan_expires_at }
    },
    'users.set-plan': async (args) => {
      const email = parseEmail(args.email)
      const { plan, end } = parsePlanArgs(args, services.now())
      return setPlan(services.database.db, email.toLowerCase(), plan, end, services.now())
    },
  }
}

function parseEmail(value: unknown): string {
  const email = String(value ?? '').trim()
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error('--email must be an email address')
  return email
}

/** --plan and --until, validated together (plans.ts says what --until means). */
function parsePlanArgs(args: Record<string, unknown>, now: number): { plan: Plan; end: Date | null } {
  const plan = parsePlan(args.plan)
  return { plan, end: parsePlanEnd(plan, args.until, now) }
}
