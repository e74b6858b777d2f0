import crypto from 'node:crypto'
import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import { isUniqueViolation } from '../db/errors.js'
import { AppError, notFound } from '../http/errors.js'
import { newId } from '../http/ids.js'
import type { SharedState } from '../http/shared-state.js'
import type { UpstreamClient } from '../market/upstream-client.js'
import {
  deleteKey,
  type ExchangeKeyRow,
  findByFingerprint,
  findKey,
  findNewestSealedKeyByEmail,
  findSealedKey,
  insertKey,
  listUserKeys,
  lockUserAndCountKeys,
  recordVerification,
  type SealedExchangeKeyRow,
} from './queries.js'
import { type ExchangeKey, type ExchangeKeyCreate, type KeyStatus, type KeyVerifyResult, MAX_EXCHANGE_KEYS } from './schemas.js'
import { type Verification, verifyExchangeKey } from './verification.js'

/**
 * A key is checked against the exchange at most once per this interval, whoever asks: the public
 * /api-key/verify must not let anyone make us hammer the exchange with a user's key (which could get
 * the key or our IP banned). Inside the interval the last recorded outcome is reported.
 */
export const RECHECK_INTERVAL_MS = 60_000

export interface ExchangeKeyDeps {
  db: Db
  box: SecretBox
  upstream: UpstreamClient
  shared: SharedState
  now: () => number
}

export async function registerKey(deps: ExchangeKeyDeps, userId: number, input: ExchangeKeyCreate): Promise<ExchangeKey> {
  const { db, box } = deps
  const fingerprint = crypto.createHash('sha256').update(input.api_key).digest('hex')
  const existing = await findByFingerprint(db, userId, fingerprint)
  if (existing) throw duplicate(existing.id)
  // The check runs before the insert so no transaction stays open across the exchange call.
  const checkedAt = deps.now()
  const outcome = await verifyExchangeKey(deps.upstream, { apiKey: input.api_key, apiSecret: input.api_secret }, checkedAt)
  const id = newId('xk')
  try {
    const row = await db.transaction().execute(async (trx) => {
      const count = await lockUserAndCountKeys(trx, userId)
      if (count >= MAX_EXCHANGE_KEYS) {
        throw new AppError('LIMIT_REACHED', `you already have ${count} exchange keys; the limit is ${MAX_EXCHANGE_KEYS}: delete one first`)
      }
      return insertKey(trx, {
        id,
        userId,
        label: input.label?.trim() || null,
        apiKeyEnc: box.seal(input.api_key),
        apiKeyMasked: mask(input.api_key),
        apiKeySha256: fingerprint,
        apiSecretEnc: box.seal(input.api_secret),
        status: outcome.status,
        code: outcome.code,
        message: outcome.message,
        lastVerified: outcome.status === 'pending' ? null : new Date(checkedAt),
        createdAt: new Date(checkedAt),
      })
    })
    await deps.shared.claimOnce(recheckKey(row.id), RECHECK_INTERVAL_MS, checkedAt)
    return toExchangeKey(row)
  } catch (error) {
    if (isUniqueViolation(error)) {
      const raced = await findByFingerprint(db, userId, fingerprint)
      if (raced) throw duplicate(raced.id)
    }
    throw error
  }
}

export async function listKeys({ db }: ExchangeKeyDeps, userId: number): Promise<{ data: ExchangeKey[] }> {
  return { data: (await listUserKeys(db, userId)).map(toExchangeKey) }
}

export async function removeKey({ db }: ExchangeKeyDeps, userId: number, id: string): Promise<void> {
  if (!(await deleteKey(db, userId, id))) throw notFound(`exchange key ${id}`)
}

/** Checks one of the user's keys against the exchange again (at most once a minute) and returns it. */
export async function reverifyKey(deps: ExchangeKeyDeps, userId: number, id: string): Promise<ExchangeKey> {
  const row = await findSealedKey(deps.db, userId, id)
  if (!row) throw notFound(`exchange key ${id}`)
  const { row: checked } = await recheck(deps, row)
  return toExchangeKey(checked)
}

const NO_KEY = 'user or API key does not exist'

/** POST /api-key/verify: re-checks the email's registered key against the exchange and says how it went. */
export async function verifyByEmail(deps: ExchangeKeyDeps, rawEmail: string): Promise<KeyVerifyResult> {
  const email = normalizeEmail(rawEmail)
  const row = await findNewestSealedKeyByEmail(deps.db, email)
  if (!row) return { success: false, message: NO_KEY, email, has_api_key: false }
  const { row: checked, fresh } = await recheck(deps, row)
  const success = checked.verification_status === 'verified' && (fresh?.status ?? 'verified') === 'verified'
  return { success, message: verifyMessage(checked, fresh), email, has_api_key: true }
}

/** GET /api-key/status/{email}: the registered key's state, exactly the spec's fields. */
export async function statusByEmail({ db }: ExchangeKeyDeps, rawEmail: string): Promise<KeyStatus> {
  const email = normalizeEmail(rawEmail)
  const row = await findNewestSealedKeyByEmail(db, email)
  if (!row) return { success: false, message: NO_KEY, email, has_api_key: false }
  return {
    success: true,
    message: 'API key found',
    email,
    has_api_key: true,
    verification_status: row.verification_status,
    last_verified: row.last_verified ? naiveUtc(row.last_verified) : null,
    created_at: naiveUtc(row.created_at),
    is_active: row.verification_status !== 'failed',
  }
}

/**
 * Checks the key with the exchange unless it was checked within RECHECK_INTERVAL_MS; `fresh` is the
 * outcome of this call's check, undefined when the recorded state was reused.
 */
async function recheck(deps: ExchangeKeyDeps, row: SealedExchangeKeyRow): Promise<{ row: ExchangeKeyRow; fresh: Verification | undefined }> {
  const now = deps.now()
  if (!(await deps.shared.claimOnce(recheckKey(row.id), RECHECK_INTERVAL_MS, now))) return { row, fresh: undefined }
  const credentials = { apiKey: deps.box.open(row.api_key_enc), apiSecret: deps.box.open(row.api_secret_enc) }
  const fresh = await verifyExchangeKey(deps.upstream, credentials, now)
  const updated = (await recordVerification(deps.db, row.id, fresh, new Date(now))) ?? (await findKey(deps.db, row.id))
  // Deleted meanwhile: report what was checked rather than fail.
  return { row: updated ?? row, fresh }
}

function verifyMessage(row: ExchangeKeyRow, fresh: Verification | undefined): string {
  if (!fresh) return `API key was checked less than ${RECHECK_INTERVAL_MS / 1000} s ago; its status is ${row.verification_status}`
  if (fresh.status === 'verified') return 'API key verified with the exchange'
  if (fresh.status === 'failed') return `the exchange refused the API key (code ${fresh.code})`
  return 'the exchange could not confirm the API key right now; try again later'
}

function recheckKey(id: string): string {
  return `xkey-check:${id}`
}

function duplicate(id: string): AppError {
  return new AppError('DUPLICATE_KEY', `this exchange API key is already registered as ${id}`, { field: 'api_key' })
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

/** The first 4 and last 4 characters: enough to recognise a key, not enough to use it. */
export function mask(apiKey: string): string {
  return `${apiKey.slice(0, 4)}…${apiKey.slice(-4)}`
}

/** ISO 8601 UTC without zone, with microseconds like the public strategy records (Python's isoformat()). */
function naiveUtc(time: Date): string {
  return `${time.toISOString().slice(0, 23)}000`
}

function toExchangeKey(row: ExchangeKeyRow): ExchangeKey {
  const failedOrInconclusive = row.verification_status !== 'verified' && row.verification_message !== null
  return {
    id: row.id,
    label: row.label,
    api_key: row.api_key_masked,
    verification_status: row.verification_status,
    last_verified: row.last_verified?.toISOString() ?? null,
    verification_error: failedOrInconclusive ? { code: row.verification_code, message: row.verification_message! } : null,
    created_at: row.created_at.toISOString(),
  }
}
