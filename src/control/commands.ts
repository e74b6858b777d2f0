import { issueApiKey } from '../auth/api-keys.js'
import { parseScopes } from '../auth/scopes.js'
import type { Services } from '../services.js'
import type { CommandHandler } from './control-socket.js'

/** The operator commands that must run where the database is: in this process, or a running server. */
export function operatorCommands(services: Services): Record<string, CommandHandler> {
  return {
    'keys.create': async (args) => {
      const email = String(args.email ?? '').trim()
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error('--email must be an email address')
      return issueApiKey(services.database.db, services.secrets, { email, scopes: parseScopes(String(args.scopes ?? '')) })
    },
  }
}
