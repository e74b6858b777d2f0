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

/** An account ready to serve: balances as exact 8-decimal strings, in a stable order. */
export interface Account {
  apiKey: string
  secretKey: string
  alias: string
  balances: { asset: string; amount: string }[]
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

/** Parses the `--account KEY:SECRET` flag (split at the first colon; the key has none). */
export function parseAccountFlag(flag: string): ReplayAccount {
  const colon = flag.indexOf(':')
  if (colon <= 0 || colon === flag.length - 1) throw new Error(`--account must be KEY:SECRET (got "${flag}")`)
  return { apiKey: flag.slice(0, colon), secretKey: flag.slice(colon + 1) }
}

/** Validates the accounts and indexes them by API key; throws naming the first bad one. */
export function indexAccounts(accounts: ReplayAccount[]): Map<string, Account> {
  const byKey = new Map<string, Account>()
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
    byKey.set(account.apiKey, { apiKey: account.apiKey, secretKey: account.secretKey, alias: aliasOf(account.apiKey), balances })
  }
  return byKey
}

/** A decimal as Binance prints balances: exactly 8 decimals, digits kept as given (no float rounding). */
function eightDecimals(amount: string | number, what: string): string {
  const text = typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 ? amount.toFixed(8) : String(amount)
  const match = DECIMAL.exec(text)
  if (!match) throw new Error(`replay exchange: ${what} must be a non-negative decimal with at most 8 decimals (got ${JSON.stringify(amount)})`)
  return `${match[1]}.${(match[2] ?? '.').slice(1).padEnd(8, '0')}`
}

/** Binance's accountAlias: a short code unique to the account; here derived from the key, so it is stable. */
function aliasOf(apiKey: string): string {
  const letters = crypto.createHash('sha256').update(apiKey).digest('base64').replace(/[^A-Za-z]/g, '')
  return `${letters.slice(0, 2)}${letters.slice(2, 4).toLowerCase()}${letters.slice(4, 8)}`
}

const ZERO = '0.00000000'

/** GET /fapi/v2/account in single-asset mode: totals are the USDT asset's; no positions (the replay takes no orders). */
export function accountPayload(account: Account, updateTime: number): Record<string, unknown> {
  const usdt = account.balances.find((b) => b.asset === 'USDT')?.amount ?? ZERO
  return {
    feeTier: 0,
    canTrade: true,
    canDeposit: true,
    canWithdraw: true,
    updateTime: 0,
    multiAssetsMargin: false,
    tradeGroupId: -1,
    totalInitialMargin: ZERO,
    totalMaintMargin: ZERO,
    totalWalletBalance: usdt,
    totalUnrealizedProfit: ZERO,
    totalMarginBalance: usdt,
    totalPositionInitialMargin: ZERO,
    totalOpenOrderInitialMargin: ZERO,
    totalCrossWalletBalance: usdt,
    totalCrossUnPnl: ZERO,
    availableBalance: usdt,
    maxWithdrawAmount: usdt,
    assets: account.balances.map(({ asset, amount }) => ({
      asset,
      walletBalance: amount,
      unrealizedProfit: ZERO,
      marginBalance: amount,
      maintMargin: ZERO,
      initialMargin: ZERO,
      positionInitialMargin: ZERO,
      openOrderInitialMargin: ZERO,
      ...available(amount, updateTime),
    })),
    positions: [],
  }
}

/** GET /fapi/v2/balance: one row per asset. */
export function balancePayload(account: Account, updateTime: number): Record<string, unknown>[] {
  return account.balances.map(({ asset, amount }) => ({
    accountAlias: account.alias,
    asset,
    balance: amount,
    ...available(amount, updateTime),
  }))
}

/** The fields an asset row of both endpoints ends with: with no positions, all of it is available. */
function available(amount: string, updateTime: number): Record<string, unknown> {
  return { crossWalletBalance: amount, crossUnPnl: ZERO, availableBalance: amount, maxWithdrawAmount: amount, marginAvailable: true, updateTime }
}
