import type { SecretBox } from '../../auth/secret-box.js'
import type { Db } from '../../db/connect.js'
import { findSealedKey } from '../../exchange-keys/queries.js'
import type { UpstreamClient } from '../../market/upstream-client.js'
import { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { RunRow } from '../queries.js'
import { RunFailure } from './run-failure.js'

/** The signed trading client of a live run: its exchange key, opened only in memory, signing with our clock. */
export async function tradingClientOf(db: Db, secrets: SecretBox, upstream: UpstreamClient, run: RunRow, now: () => number): Promise<BinanceTradingClient> {
  const key = run.exchange_key_id === null ? undefined : await findSealedKey(db, run.user_id, run.exchange_key_id)
  if (!key) throw new RunFailure('KEY_REVOKED', `the run's exchange key ${run.exchange_key_id ?? '(none)'} was deleted; register a key and deploy again`)
  return new BinanceTradingClient(upstream, { apiKey: secrets.open(key.api_key_enc), apiSecret: secrets.open(key.api_secret_enc) }, now)
}
