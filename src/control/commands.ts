import { issueApiKey } from '../auth/api-keys.js'
import { prefillHistory, prefillRequestOf } from '../backtests/history-prefill.js'
import { setPlan } from '../auth/plans.js'
import { backupRunningDatabase } from '../backup/create-backup.js'
import { findOrCreateUserByEmail } from '../auth/queries.js'
import { parsePaperAmount, setPaperBalance } from '../live/paper-wallet.js'
import type { Services } from '../services.js'
import type { CommandHandler } from './control-socket.js'
import { parseBackupFile, parseEmail, parseKeysCreateArgs, parsePlanArgs } from './operator-args.js'

/** The operator commands that must run where the database is: in this process, or a running server. */
export function operatorCommands(services: Services): Record<string, CommandHandler> {
  return {
    'keys.create': async (args) => {
      const { email, scopes, plan } = parseKeysCreateArgs(args, services.now())
      const issued = await issueApiKey(services.database.db, services.secrets, { email, scopes })
      if (!plan) return issued
      const change = await setPlan(services.database.db, email.toLowerCase(), plan.plan, plan.end, services.now())
      return { ...issued, plan: change.plan, plan_expires_at: change.plan_expires_at }
    },
    // An app token without an identity provider: for operators and local development, where no
    // IDPA_*/IDPB_* is configured but the Bearer-only routes (/v1/api-keys, /v1/exchange-keys) are wanted.
    'tokens.issue': async (args) => {
      const email = parseEmail(args.email).toLowerCase()
      const userId = await findOrCreateUserByEmail(services.database.db, email)
      const accessToken = await services.tokens.issue(userId, services.now())
      return { access_token: accessToken, token_type: 'Bearer', expires_in: services.config.appJwtTtlSeconds, user_id: userId, email }
    },
    'users.set-paper-balance': async (args) =>
      setPaperBalance(services.database.db, parseEmail(args.email).toLowerCase(), parsePaperAmount(args.amount)),
    // `perpetua history fetch` while this server holds the embedded store: the prefill runs here, on its
    // market data (weight budget and archive client shared with its own jobs).
    'history.fetch': async (args) => prefillHistory({ db: services.database.db, market: services.market, warn: () => undefined }, prefillRequestOf(args)),
    // `perpetua backup FILE` while this server holds the embedded store: only its database thread can
    // copy the database consistently. The CLI sends an absolute path; this process writes the file.
    'backup.create': async (args, progress) => backupRunningDatabase(services.database, services.config, parseBackupFile(args.file), progress ?? (() => undefined)),
    'users.set-plan': async (args) => {
      const email = parseEmail(args.email)
      const { plan, end } = parsePlanArgs(args, services.now())
      return setPlan(services.database.db, email.toLowerCase(), plan, end, services.now())
    },
  }
}
