import fs from 'node:fs'
import path from 'node:path'
import { type Plan, parsePlan, parsePlanEnd } from '../auth/plans.js'
import { parseScopes, type Scope } from '../auth/scopes.js'
import { parsePaperAmount } from '../live/paper-wallet.js'

// The arguments of the operator commands, read the same way by the handlers (commands.ts) and by the
// CLI before it opens a database or calls a server: a bad argument is a usage error that changes nothing.

export function parseEmail(value: unknown): string {
  const email = String(value ?? '').trim()
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error('--email must be an email address')
  return email
}

/** --plan and --until, validated together (plans.ts says what --until means). */
export function parsePlanArgs(args: Record<string, unknown>, now: number): { plan: Plan; end: Date | null } {
  const plan = parsePlan(args.plan)
  return { plan, end: parsePlanEnd(plan, args.until, now) }
}

export interface KeysCreateArgs {
  email: string
  scopes: Scope[]
  plan: { plan: Plan; end: Date | null } | undefined
}

export function parseKeysCreateArgs(args: Record<string, unknown>, now: number): KeysCreateArgs {
  const email = parseEmail(args.email)
  const scopes = parseScopes(String(args.scopes ?? ''))
  if (args.plan === undefined && args.until !== undefined) throw new Error('--until needs --plan')
  return { email, scopes, plan: args.plan === undefined ? undefined : parsePlanArgs(args, now) }
}

/** Where `perpetua backup` writes: an absolute path to a new file in an existing folder (never overwritten). */
export function parseBackupFile(value: unknown): string {
  const file = String(value ?? '')
  if (!path.isAbsolute(file)) throw new Error('the backup file must be an absolute path')
  if (fs.existsSync(file)) throw new Error(`${file} exists; give a new file name (a backup never overwrites)`)
  if (!fs.statSync(path.dirname(file), { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${path.dirname(file)} is not a folder`)
  return file
}

/** Throws what is wrong with a command's arguments, as its handler would, without touching a database. */
export function checkOperatorArgs(command: string, args: Record<string, unknown>, now: number): void {
  switch (command) {
    case 'keys.create':
      parseKeysCreateArgs(args, now)
      return
    case 'tokens.issue':
      parseEmail(args.email)
      return
    case 'users.set-paper-balance':
      parseEmail(args.email)
      parsePaperAmount(args.amount)
      return
    case 'users.set-plan':
      parseEmail(args.email)
      parsePlanArgs(args, now)
      return
    case 'backup.create':
      parseBackupFile(args.file)
      return
  }
}
