import type { Command } from 'commander'
import { PerpetuaClient } from '../client/perpetua-client.js'
import { loadClientEnvironment } from '../config.js'
import { UsageError } from './cli-errors.js'
import { type ClientSettings, clientOptions, resolveClientSettings } from './client-settings.js'
import type { Output } from './output.js'

/** What every client command is given: where to write, and how to make its client. */
export interface CliContext {
  output: Output
  /**
   * The client of this invocation (--profile, the environment, the profile file). `signed` refuses to
   * go on without credentials, with a message saying where they come from; `public` sends none (the
   * /v1/market reads where signing is optional: a key without market:read would only turn them into 403s).
   */
  client(command: Command, need: 'signed' | 'public'): PerpetuaClient
  /** An AbortSignal that fires on Ctrl-C (SIGINT) or SIGTERM, for the commands that wait. */
  interrupted(): AbortSignal
}

export function cliContext(output: Output): CliContext {
  let interrupt: AbortController | undefined
  return {
    output,
    client(command, need) {
      const { profile } = command.optsWithGlobals<{ profile?: string }>()
      const env = loadClientEnvironment()
      const settings = resolveClientSettings(env, profile, output.err)
      if (need === 'signed' && settings.credentials === undefined) throw new UsageError(noCredentials(settings, env.profilesFile))
      try {
        return new PerpetuaClient(need === 'public' ? { baseUrl: settings.url } : clientOptions(settings))
      } catch (error) {
        throw new UsageError(`${(error as Error).message} (from ${settings.source})`)
      }
    },
    interrupted() {
      if (!interrupt) {
        const controller = new AbortController()
        interrupt = controller
        const onSignal = (signal: NodeJS.Signals) => controller.abort(new Interrupted(signal))
        process.once('SIGINT', onSignal)
        process.once('SIGTERM', onSignal)
      }
      return interrupt.signal
    },
  }
}

/** The reason of an interrupted() abort. */
export class Interrupted extends Error {
  override name = 'Interrupted'
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal})`)
  }
}

function noCredentials(settings: ClientSettings, profilesFile: string): string {
  return (
    `this command needs credentials and none are set (talking to ${settings.url}, settings from ${settings.source}): ` +
    `set PERPETUA_API_KEY and PERPETUA_API_SECRET (a key from \`perpetua keys create\`), or PERPETUA_TOKEN, ` +
    `or put them in a profile in ${profilesFile}`
  )
}
