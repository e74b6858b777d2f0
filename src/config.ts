import os from 'node:os'
import path from 'node:path'

/** Everything Perpetua reads from its environment, validated and typed. */
export interface Config {
  port: number
  host: string
  dataDir: string
  databaseUrl: string | undefined
  redisUrl: string | undefined
  upstreamUrl: string | undefined
  /** The `/futures/data` host; UPSTREAM_URL when not set (both unset: the built-in replay exchange). */
  upstreamDataUrl: string | undefined
  /** Market streams for strategy runners (UPSTREAM_WS_URL); unset: the built-in replay exchange's, or UPSTREAM_URL with ws(s). */
  upstreamWsUrl: string | undefined
  /**
   * UPSTREAM_ARCHIVE_URL: Binance's public data archive (https://data.binance.vision) or a copy of its
   * layout, where backtests take whole months and days of klines; 'off' disables it. Unset: the built-in
   * replay exchange's own archive when UPSTREAM_URL is unset too, else off.
   */
  upstreamArchiveUrl: string | 'off' | undefined
  /** Recorded data for the built-in replay exchange (unset = the project's data/ folder). */
  replayDataDir: string | undefined
  masterKey: Buffer | undefined
  appJwtSecret: Buffer | undefined
  appJwtTtlSeconds: number
  idpa: IdentityProviderConfig
  idpb: IdentityProviderConfig
  webhookAllowPrivateHosts: boolean
  /**
   * WEBHOOK_CA_FILE: a PEM file of extra CAs trusted for webhook receivers, besides Node's roots and
   * NODE_EXTRA_CA_CERTS (which Node reads only at process start; tests and benches make their CA later).
   */
  webhookCaFile: string | undefined
  /** The built dashboard served at /app/ (index.html + assets/); unset: the package's dist/web. Not from the environment; tests set it. */
  dashboardDir: string | undefined
  /** Time limit of one webhook delivery attempt (spec: 10 s). Not from the environment; tests lower it. */
  webhookTimeoutMs: number
  workers: number
  /**
   * HISTORY_CACHE_MB: decoded bars a worker node keeps in memory between backtests and sweeps, and a
   * sixteenth of that for funding (work/history-cache.ts); 0 keeps none.
   */
  historyCacheMb: number
  logLevel: LogLevel
  /** Weight budget per API key (or IP when unsigned) per minute on /v1. */
  weightPerMinute: number
  /** Request budget per IP per minute on public endpoints. */
  ipRequestsPerMinute: number
  /** Connections in the PostgreSQL pool (server mode; embedded mode always uses 1). */
  dbPoolMax: number
  /** Sandbox threads of the API for users' strategy modules (uploads, params checks), shared fairly between users. */
  sandboxThreads: number
  /**
   * SHUTDOWN_GRACE_MS: how long a node that got SIGTERM lets HTTP requests in flight finish before it closes
   * their connections (its runs and jobs are handed over first, without waiting on this).
   */
  shutdownGraceMs: number
}

export interface IdentityProviderConfig {
  issuer: string | undefined
  audience: string | undefined
  jwksUrl: string | undefined
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

/** Reads and validates the environment; throws one ConfigError listing every bad key. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const read = new EnvReader(env, problems)
  const upstreamUrl = read.url('UPSTREAM_URL', ['http:', 'https:'])
  const config: Config = {
    port: read.integer('PORT', 8080, 0, 65535),
    host: read.string('HOST') ?? '127.0.0.1',
    dataDir: path.resolve(read.string('DATA_DIR') ?? './.perpetua'),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    upstreamUrl,
    upstreamDataUrl: read.url('UPSTREAM_DATA_URL', ['http:', 'https:']) ?? upstreamUrl,
    upstreamWsUrl: read.url('UPSTREAM_WS_URL', ['ws:', 'wss:']),
    upstreamArchiveUrl: read.string('UPSTREAM_ARCHIVE_URL')?.toLowerCase() === 'off' ? 'off' : read.url('UPSTREAM_ARCHIVE_URL', ['http:', 'https:']),
    replayDataDir: read.string('REPLAY_DATA_DIR') === undefined ? undefined : path.resolve(read.string('REPLAY_DATA_DIR')!),
    masterKey: read.key32('MASTER_KEY'),
    appJwtSecret: read.key32('APP_JWT_SECRET'),
    appJwtTtlSeconds: read.integer('APP_JWT_TTL', 3600, 60, 30 * 24 * 3600),
    idpa: read.identityProvider('IDPA'),
    idpb: read.identityProvider('IDPB'),
    webhookAllowPrivateHosts: read.boolean('WEBHOOK_ALLOW_PRIVATE_HOSTS', false),
    webhookCaFile: read.string('WEBHOOK_CA_FILE') === undefined ? undefined : path.resolve(read.string('WEBHOOK_CA_FILE')!),
    webhookTimeoutMs: 10_000,
    dashboardDir: undefined,
    workers: read.integer('WORKERS', Math.max(1, os.availableParallelism() - 1), 1, 64),
    historyCacheMb: read.integer('HISTORY_CACHE_MB', 64, 0, 65536),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    weightPerMinute: read.integer('RATE_LIMIT_WEIGHT_PER_MINUTE', 1200, 1, 1e9),
    ipRequestsPerMinute: read.integer('RATE_LIMIT_IP_PER_MINUTE', 2400, 1, 1e9),
    dbPoolMax: read.integer('DB_POOL_MAX', 10, 1, 200),
    sandboxThreads: read.integer('SANDBOX_THREADS', 2, 1, 32),
    shutdownGraceMs: read.integer('SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/** What the user CLI's client commands read from the environment; src/cli/client-settings.ts adds the profile file. */
export interface ClientEnvironment {
  /** PERPETUA_URL: the Perpetua to talk to. */
  url: string | undefined
  /** PERPETUA_API_KEY and PERPETUA_API_SECRET: a key that signs every /v1 request. */
  apiKey: string | undefined
  apiSecret: string | undefined
  /** PERPETUA_TOKEN: an app token (Bearer), instead of a key. */
  token: string | undefined
  /** PERPETUA_PROFILE: the profile to use when --profile is not given. */
  profile: string | undefined
  /** PERPETUA_PROFILES, else $XDG_CONFIG_HOME/perpetua/profiles.json, else ~/.config/perpetua/profiles.json. */
  profilesFile: string
  /** $XDG_CONFIG_HOME/perpetua, else ~/.config/perpetua: the CLI's own files (webhooks listen's certificate). */
  configDir: string
  /** PERPETUA_WEBHOOK_SECRET: `webhooks listen --webhook ID` verifies deliveries with it when --secret is not given. */
  webhookSecret: string | undefined
}

/** Reads the client commands' variables; throws one ConfigError listing every bad one. */
export function loadClientEnvironment(env: Env = process.env): ClientEnvironment {
  const problems: string[] = []
  const read = new EnvReader(env, problems)
  const configHome = read.string('XDG_CONFIG_HOME') ?? path.join(read.string('HOME') ?? os.homedir(), '.config')
  const result: ClientEnvironment = {
    url: read.url('PERPETUA_URL', ['http:', 'https:']),
    apiKey: read.string('PERPETUA_API_KEY'),
    apiSecret: read.string('PERPETUA_API_SECRET'),
    token: read.string('PERPETUA_TOKEN'),
    profile: read.string('PERPETUA_PROFILE'),
    profilesFile: path.resolve(read.string('PERPETUA_PROFILES') ?? path.join(configHome, 'perpetua', 'profiles.json')),
    configDir: path.resolve(configHome, 'perpetua'),
    webhookSecret: read.string('PERPETUA_WEBHOOK_SECRET'),
  }
  if ((result.apiKey === undefined) !== (result.apiSecret === undefined)) problems.push('PERPETUA_API_KEY and PERPETUA_API_SECRET go together: set both or neither')
  if (result.token !== undefined && result.apiKey !== undefined) problems.push('set either PERPETUA_TOKEN or PERPETUA_API_KEY/PERPETUA_API_SECRET, not both')
  if (problems.length > 0) throw new ConfigError(problems)
  return result
}

class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  string(key: string): string | undefined {
    const value = this.env[key]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }

  integer(key: string, fallback: number, min: number, max: number): number {
    const raw = this.string(key)
    if (raw === undefined) return fallback
    const value = Number(raw)
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(`${key} must be an integer from ${min} to ${max} (got "${raw}")`)
      return fallback
    }
    return value
  }

  boolean(key: string, fallback: boolean): boolean {
    const raw = this.string(key)?.toLowerCase()
    if (raw === undefined) return fallback
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true
    if (['0', 'false', 'no', 'off'].includes(raw)) return false
    this.problems.push(`${key} must be true or false (got "${raw}")`)
    return fallback
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(key)
    if (raw === undefined) return fallback
    if ((allowed as readonly string[]).includes(raw)) return raw as T
    this.problems.push(`${key} must be one of ${allowed.join(', ')} (got "${raw}")`)
    return fallback
  }

  url(key: string, protocols: string[]): string | undefined {
    const raw = this.string(key)
    if (raw === undefined) return undefined
    try {
      const url = new URL(raw)
      if (protocols.includes(url.protocol)) return raw.replace(/\/+$/, '')
    } catch {
      // reported below
    }
    this.problems.push(`${key} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`)
    return undefined
  }

  /** A 32-byte key given as base64 or base64url. */
  key32(key: string): Buffer | undefined {
    const raw = this.string(key)
    if (raw === undefined) return undefined
    const bytes = Buffer.from(raw, /[-_]/.test(raw) ? 'base64url' : 'base64')
    if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) {
      this.problems.push(`${key} must be 32 bytes encoded as base64 (e.g. from: openssl rand -base64 32)`)
      return undefined
    }
    return bytes
  }

  identityProvider(prefix: string): IdentityProviderConfig {
    return {
      issuer: this.string(`${prefix}_ISSUER`),
      audience: this.string(`${prefix}_AUDIENCE`),
      jwksUrl: this.url(`${prefix}_JWKS_URL`, ['http:', 'https:']),
    }
  }
}
