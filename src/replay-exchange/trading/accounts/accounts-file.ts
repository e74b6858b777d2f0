import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** One futures account of the replay exchange, reached with its API key and secret (USER_DATA endpoints). */
export interface ReplayAccount {
  apiKey: string
  secretKey: string
  /** Wallet balance per asset as a decimal string or number; default { USDT: '10000' }. */
  balances?: Record<string, string | number>
}

export const ACCOUNTS_FILE = 'accounts.json'
const DEFAULT_BALANCES = { USDT: '10000' }
// Printable ASCII without spaces: what fits an HTTP header (the key) and what Binance issues.
const CREDENTIAL = /^[\x21-\x7e]{1,256}$/
const ASSET = /^[A-Z0-9]{1,20}$/
const DECIMAL = /^(0|[1-9]\d{0,17})(\.\d{1,8})?$/

/** The accounts of `<dataDir>/accounts.json` (none when the file is absent); throws naming the file on bad content. */
export function loadAccountsFile(dataDir: string): ReplayAccount[] {
  const file = path.join(dataDir, ACCOUNTS_FILE)
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new Error(`replay exchange: ${file} is not valid JSON (${(error as Error).message})`)
  }
  if (!Array.isArray(value)) throw new Error(`replay exchange: ${file} must hold an array of {"apiKey", "secretKey", "balances"?}`)
  return value.map((entry, index) => {
    const { apiKey, secretKey, balances } = (entry ?? {}) as Record<string, unknown>
    if (typeof apiKey !== 'string' || typeof secretKey !== 'string') {
      throw new Error(`replay exchange: ${file} entry ${index} needs string "apiKey" and "secretKey"`)
    }
    if (balances !== undefined && (typeof balances !== 'object' || balances === null || Array.isArray(balances))) {
      throw new Error(`replay exchange: ${file} entry ${index}: "balances" must be an object such as {"USDT": "10000"}`)
    }
    return { apiKey, secretKey, ...(balances === undefined ? {} : { balances: balances as Record<string, string | number> }) }
  })
}

/**
 * Parses the `--account KEY:SECRET[:BALANCE]` flag: split at the first colon (the key has none); a
 * last part that is a decimal is the USDT balance (a secret ending in ":<digits>" needs the balance given).
 */
export function parseAccountFlag(flag: string): ReplayAccount {
  const colon = flag.indexOf(':')
  if (colon <= 0 || colon === flag.length - 1) throw new Error(`--account must be KEY:SECRET[:BALANCE] (got "${flag}")`)
  const apiKey = flag.slice(0, colon)
  const rest = flag.slice(colon + 1)
  const last = rest.lastIndexOf(':')
  if (last > 0 && DECIMAL.test(rest.slice(last + 1))) return { apiKey, secretKey: rest.slice(0, last), balances: { USDT: rest.slice(last + 1) } }
  return { apiKey, secretKey: rest }
}

/** A configured account, checked: balances as numbers per asset. */
export interface CheckedAccount {
  apiKey: string
  secretKey: string
  balances: Map<string, number>
}

/** Validates the accounts; throws naming the first bad one (or a key configured twice). */
export function checkAccounts(accounts: ReplayAccount[]): CheckedAccount[] {
  const byKey = new Map<string, CheckedAccount>()
  for (const account of accounts) {
    const label = `account ${account.apiKey.slice(0, 8)}…`
    if (!CREDENTIAL.test(account.apiKey) || !CREDENTIAL.test(account.secretKey)) {
      throw new Error(`replay exchange: ${label}: apiKey and secretKey must be 1 to 256 printable ASCII characters without spaces`)
    }
    if (byKey.has(account.apiKey)) throw new Error(`replay exchange: ${label} is configured twice`)
    const balances = Object.entries(account.balances ?? DEFAULT_BALANCES)
      .map(([asset, amount]) => ({ asset, amount: eightDecimals(amount, `${label} balance ${asset}`) }))
      .sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0))
    for (const { asset } of balances) if (!ASSET.test(asset)) throw new Error(`replay exchange: ${label}: asset "${asset}" must be uppercase letters and digits`)
    byKey.set(account.apiKey, { apiKey: account.apiKey, secretKey: account.secretKey, balances: new Map(balances.map((b) => [b.asset, Number(b.amount)])) })
  }
  return [...byKey.values()]
}

/** Checks one amount for the control routes (funding): a non-negative decimal with at most 8 decimals. */
export function checkAmount(amount: unknown, what: string): number {
  if (typeof amount !== 'string' && typeof amount !== 'number') throw new Error(`${what} must be a decimal string or number`)
  return Number(eightDecimals(amount, what))
}

/** Checks credentials given to the control route. */
export function checkCredentials(apiKey: unknown, secretKey: unknown): { apiKey: string; secretKey: string } {
  if (typeof apiKey !== 'string' || typeof secretKey !== 'string' || !CREDENTIAL.test(apiKey) || !CREDENTIAL.test(secretKey)) {
    throw new Error('apiKey and secretKey must be 1 to 256 printable ASCII characters without spaces')
  }
  return { apiKey, secretKey }
}

export function checkAsset(asset: unknown): string {
  if (typeof asset !== 'string' || !ASSET.test(asset)) throw new Error('asset must be uppercase letters and digits, such as USDT')
  return asset
}

/** A decimal as Binance prints balances: exactly 8 decimals, digits kept as given (no float rounding). */
function eightDecimals(amount: string | number, what: string): string {
  const text = typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 ? amount.toFixed(8) : String(amount)
  const match = DECIMAL.exec(text)
  if (!match) throw new Error(`replay exchange: ${what} must be a non-negative decimal with at most 8 decimals (got ${JSON.stringify(amount)})`)
  return `${match[1]}.${(match[2] ?? '.').slice(1).padEnd(8, '0')}`
}

/** Binance's accountAlias: a short code unique to the account; here derived from the key, so it is stable. */
export function aliasOf(apiKey: string): string {
  const letters = crypto.createHash('sha256').update(apiKey).digest('base64').replace(/[^A-Za-z]/g, '')
  return `${letters.slice(0, 2)}${letters.slice(2, 4).toLowerCase()}${letters.slice(4, 8)}`
}
