import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import { findSealedKey } from '../exchange-keys/queries.js'
import { AppError } from '../http/errors.js'
import type { UpstreamClient } from '../market/upstream-client.js'
import { DRY_RUN_HINT } from '../strategies/live-deploy-question.js'
import { BinanceTradingClient } from '../trading/binance/trading-client.js'

/** The verified exchange key a live run trades: the one named, else the user's newest verified key (DESIGN §6). */
export async function verifiedKey(db: Db, userId: number, keyId: string | undefined): Promise<string> {
  let query = db.selectFrom('exchange_keys').select('id').where('user_id', '=', userId).where('verification_status', '=', 'verified')
  if (keyId !== undefined) query = query.where('id', '=', keyId)
  const row = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst()
  if (!row) {
    throw new AppError(
      'INVALID_STATE',
      keyId !== undefined ? `exchange key ${keyId} is not a verified key of yours` : `a live run needs a verified exchange key: register one at POST /v1/exchange-keys, or ${DRY_RUN_HINT}`,
    )
  }
  return row.id
}

/** Available USDT of the account behind a key, read with the key through the signed trading client (GET /fapi/v2/account). */
export async function availableUsdt(db: Db, secrets: SecretBox, client: UpstreamClient, userId: number, keyId: string, now: number): Promise<number> {
  const key = await findSealedKey(db, userId, keyId)
  if (!key) throw new AppError('INVALID_STATE', `exchange key ${keyId} is gone`)
  const trading = new BinanceTradingClient(client, { apiKey: secrets.open(key.api_key_enc), apiSecret: secrets.open(key.api_secret_enc) }, () => now)
  const answer = await trading.account()
  if (answer.kind === 'rejected') throw new AppError('INVALID_STATE', `the exchange refused the account read with your key: ${answer.code} ${answer.msg}`)
  if (answer.kind !== 'ok') throw new AppError('UPSTREAM_UNAVAILABLE', `the exchange did not answer the account read: ${answer.reason}`)
  const assets = answer.value.assets as { asset: string; availableBalance: string }[] | undefined
  return Number(assets?.find((a) => a.asset === 'USDT')?.availableBalance ?? 0)
}
