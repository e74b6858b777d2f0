import fs from 'node:fs'
import type { PerpetuaClientOptions } from '../client/api-client.js'
import type { ClientEnvironment } from '../config.js'
import { UsageError } from './cli-errors.js'

/** Where the client commands go when nothing says otherwise: what `npm start` serves. */
export const DEFAULT_URL = 'http://127.0.0.1:8080'

/** One entry of the profile file. */
export interface Profile {
  url?: string
  api_key?: string
  api_secret?: string
  token?: string
}

export interface ClientSettings {
  url: string
  credentials: { apiKey: string; apiSecret: string } | { token: string } | undefined
  /** Where the settings came from, for messages: "the environment", "profile prod (…/profiles.json)". */
  source: string
}

const PROFILE_FIELDS = new Set(['url', 'api_key', 'api_secret', 'token'])

/**
 * The server and credentials of the client commands (docs/decisions/dashboard-and-cli.md, "The user CLI (issue 14)"):
 * `--profile NAME` uses that profile of the file and nothing of the environment; otherwise
 * PERPETUA_URL and the credentials in the environment (PERPETUA_API_KEY + PERPETUA_API_SECRET, or
 * PERPETUA_TOKEN) come first, each filled from the profile PERPETUA_PROFILE names, or the file's
 * `default` profile when it has one, where the environment has none. No URL anywhere: DEFAULT_URL.
 */
export function resolveClientSettings(env: ClientEnvironment, profileFlag: string | undefined, warn: (line: string) => void): ClientSettings {
  if (profileFlag !== undefined) {
    const profile = readProfile(env.profilesFile, profileFlag, true, warn)!
    return { url: profile.url ?? DEFAULT_URL, credentials: credentialsOf(profile), source: `profile ${profileFlag} (${env.profilesFile})` }
  }
  const fromEnv = env.token !== undefined ? { token: env.token } : env.apiKey !== undefined && env.apiSecret !== undefined ? { apiKey: env.apiKey, apiSecret: env.apiSecret } : undefined
  const profileName = env.profile ?? 'default'
  const profile = env.url !== undefined && fromEnv !== undefined ? undefined : readProfile(env.profilesFile, profileName, env.profile !== undefined, warn)
  const sources = [env.url !== undefined || fromEnv !== undefined ? 'the environment' : undefined, profile ? `profile ${profileName} (${env.profilesFile})` : undefined].filter(Boolean)
  return {
    url: env.url ?? profile?.url ?? DEFAULT_URL,
    credentials: fromEnv ?? (profile ? credentialsOf(profile) : undefined),
    source: sources.length > 0 ? sources.join(' and ') : 'the defaults',
  }
}

/** The client's options for these settings. */
export function clientOptions(settings: ClientSettings): PerpetuaClientOptions {
  return { baseUrl: settings.url, ...settings.credentials }
}

/** One profile, checked; undefined when the file or the profile is absent and was not asked for by name. */
function readProfile(file: string, name: string, required: boolean, warn: (line: string) => void): Profile | undefined {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`cannot read the profile file ${file}: ${(error as Error).message}`)
    if (required) throw new UsageError(`profile "${name}" was asked for, but there is no profile file at ${file} (PERPETUA_PROFILES names another)`)
    return undefined
  }
  let profiles: unknown
  try {
    profiles = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`the profile file ${file} is not JSON: ${(error as Error).message}`)
  }
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) throw new UsageError(`the profile file ${file} must hold a JSON object of profiles by name`)
  const profile = (profiles as Record<string, unknown>)[name]
  if (profile === undefined) {
    if (!required) return undefined
    const names = Object.keys(profiles)
    throw new UsageError(`profile "${name}" is not in ${file} (it has ${names.length === 0 ? 'none' : names.join(', ')})`)
  }
  const checked = checkProfile(profile, `profile "${name}" in ${file}`)
  if ((checked.api_secret !== undefined || checked.token !== undefined) && process.platform !== 'win32') {
    const mode = fs.statSync(file).mode
    if ((mode & 0o077) !== 0) warn(`perpetua: warning: ${file} holds secrets and others can read it; chmod 600 ${file}`)
  }
  return checked
}

function checkProfile(value: unknown, what: string): Profile {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${what} must be an object with url, api_key and api_secret, or url and token`)
  for (const [key, field] of Object.entries(value)) {
    if (!PROFILE_FIELDS.has(key)) throw new UsageError(`${what} has an unknown field "${key}" (known: url, api_key, api_secret, token)`)
    if (typeof field !== 'string' || field.trim() === '') throw new UsageError(`${what}: ${key} must be a non-empty string`)
  }
  const profile = value as Profile
  if (profile.url !== undefined && !/^https?:\/\/[^/]/.test(profile.url)) throw new UsageError(`${what}: url must start with http:// or https://`)
  if ((profile.api_key === undefined) !== (profile.api_secret === undefined)) throw new UsageError(`${what}: api_key and api_secret go together`)
  if (profile.token !== undefined && profile.api_key !== undefined) throw new UsageError(`${what}: give either api_key/api_secret or token, not both`)
  return profile
}

function credentialsOf(profile: Profile): ClientSettings['credentials'] {
  if (profile.token !== undefined) return { token: profile.token }
  if (profile.api_key !== undefined && profile.api_secret !== undefined) return { apiKey: profile.api_key, apiSecret: profile.api_secret }
  return undefined
}
