import readline from 'node:readline/promises'
import { PerpetuaError } from '../client/errors.js'
import type { PerpetuaClient } from '../client/perpetua-client.js'
import { type ListedExchangeKey, liveDeployKeyText, liveDeployQuestion } from '../strategies/live-deploy-question.js'
import { CommandFailed, UsageError } from './cli-errors.js'

export interface DeployModeFlags {
  live?: boolean
  dryRun?: boolean
  yes?: boolean
  capital?: string
  leverage?: number
}

/**
 * `strategies deploy` names its mode: the API's default is live (spec: dry_run false), so a forgotten
 * flag would trade real money (issue 35). Returns the body's dry_run.
 */
export function deployMode(flags: DeployModeFlags): boolean {
  if (flags.live && flags.dryRun) throw new UsageError('--live and --dry-run exclude each other: give one of them')
  if (!flags.live && !flags.dryRun) throw new UsageError('say how to deploy: --live (real orders on your exchange key) or --dry-run (the paper wallet, no real orders)')
  return flags.dryRun === true
}

/**
 * Asks on the terminal before a live deploy, naming the strategy, the exchange key and the capital.
 * Off a terminal nothing can answer, so --live needs --yes there (decisions: dashboard-and-cli.md):
 * a script that forgot --yes is refused rather than left waiting on a prompt no one sees.
 */
export async function confirmLiveDeploy(client: PerpetuaClient, id: string, flags: DeployModeFlags, signal: AbortSignal): Promise<void> {
  if (flags.yes) return
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError('--live off a terminal needs --yes: there is no one to confirm a live deploy here (or deploy with --dry-run)')
  }
  const strategy = await client.strategies.get(id)
  const keyText = liveDeployKeyText(await listedKeys(client), undefined)
  const question = liveDeployQuestion(strategy, keyText, flags.capital ?? strategy.capital, flags.leverage ?? strategy.leverage)
  const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
  try {
    const answer = await prompt.question(`${question} [y/N] `, { signal })
    if (!/^y(es)?$/i.test(answer.trim())) throw new CommandFailed(`not deployed: ${id} stays ${strategy.status}`)
  } finally {
    prompt.close()
  }
}

/** The user's exchange keys, or undefined when these credentials cannot list them (a signed API key: 403). */
async function listedKeys(client: PerpetuaClient): Promise<ListedExchangeKey[] | undefined> {
  try {
    return ((await client.get('/v1/exchange-keys')) as { data: ListedExchangeKey[] }).data
  } catch (error) {
    if (error instanceof PerpetuaError) return undefined
    throw error
  }
}
