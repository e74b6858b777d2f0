import type { FastifyInstance } from 'fastify'
import type { TradingWing } from '../trading-wing.js'
import { orderView } from '../orders/order-views.js'
import { checkAmount, checkAsset, checkCredentials } from './accounts-file.js'

export interface AccountControl {
  /** Creates an account (default 10000 USDT); throws when the key exists or a value is bad. */
  create(account: { apiKey: string; secretKey: string; balances?: Record<string, string | number> }): void
  /** Adds `amount` (negative: takes) to an asset's balance; returns the new balance. */
  fund(apiKey: string, asset: string, amount: string | number): number
  /**
   * The exchange closes (part of) the account's position on `symbol` now: a liquidation (`autoclose-…`)
   * or an auto-deleverage (`adl_autoclose`), at `price` (default: the last price), `qty` (default: all).
   * Returns the exchange's order as GET /fapi/v1/order shows it.
   */
  liquidate(apiKey: string, close: { symbol: string; kind?: 'liquidation' | 'adl'; qty?: string | number; price?: string | number }): Record<string, unknown>
}

/**
 * /__replay/accounts (POST {apiKey, secretKey, balances?}), /__replay/accounts/<apiKey>/fund
 * (POST {asset, amount}) and /__replay/accounts/<apiKey>/liquidate (POST {symbol, kind?, qty?, price?}),
 * for tests and the standalone process; the same from code on the handle.
 */
export function accountControlRoutes(app: FastifyInstance, trading: TradingWing): AccountControl {
  const { venue } = trading
  const control: AccountControl = {
    create({ apiKey, secretKey, balances }) {
      const credentials = checkCredentials(apiKey, secretKey)
      const entries = Object.entries(balances ?? { USDT: '10000' }).map(([asset, amount]) => [checkAsset(asset), checkAmount(amount, `balance ${asset}`)] as const)
      venue.create(credentials.apiKey, credentials.secretKey, new Map(entries))
    },
    fund(apiKey, asset, amount) {
      const account = venue.accounts.get(apiKey)
      if (!account) throw new Error(`no account with that apiKey`)
      const negative = typeof amount === 'string' ? amount.startsWith('-') : amount < 0
      const value = checkAmount(typeof amount === 'string' ? amount.replace(/^-/, '') : Math.abs(amount), 'amount')
      return venue.fund(account, checkAsset(asset), negative ? -value : value)
    },
    liquidate(apiKey, { symbol, kind = 'liquidation', qty, price }) {
      const account = venue.accounts.get(apiKey)
      if (!account) throw new Error(`no account with that apiKey`)
      if (typeof symbol !== 'string') throw new Error('symbol is required')
      if (kind !== 'liquidation' && kind !== 'adl') throw new Error('kind must be liquidation or adl')
      const order = venue.forceClose(account, symbol, kind, qty === undefined ? undefined : checkAmount(qty, 'qty'), price === undefined ? undefined : checkAmount(price, 'price'))
      return orderView(venue.tradable(order.symbol)!.info, order, true)
    },
  }
  const attempt = (run: () => unknown, conflict = false) => {
    try {
      return { status: 200, body: run() }
    } catch (error) {
      const message = (error as Error).message
      return { status: conflict && message.endsWith('exists') ? 409 : message.startsWith('no account') ? 404 : 400, body: { error: message } }
    }
  }
  app.post('/__replay/accounts', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>
    const result = attempt(() => {
      if (body.balances !== undefined && (typeof body.balances !== 'object' || body.balances === null || Array.isArray(body.balances))) {
        throw new Error('balances must be an object such as {"USDT": "10000"}')
      }
      control.create(body as Parameters<AccountControl['create']>[0])
      return { apiKey: body.apiKey }
    }, true)
    return reply.code(result.status === 200 ? 201 : result.status).send(result.body)
  })
  app.post('/__replay/accounts/:apiKey/fund', async (request, reply) => {
    const { apiKey } = request.params as { apiKey: string }
    const body = (request.body ?? {}) as Record<string, unknown>
    const result = attempt(() => ({ asset: body.asset, balance: control.fund(apiKey, body.asset as string, body.amount as string) }))
    return reply.code(result.status).send(result.body)
  })
  app.post('/__replay/accounts/:apiKey/liquidate', async (request, reply) => {
    const { apiKey } = request.params as { apiKey: string }
    const body = (request.body ?? {}) as Parameters<AccountControl['liquidate']>[1]
    const result = attempt(() => control.liquidate(apiKey, body))
    return reply.code(result.status).send(result.body)
  })
  app.post('/__replay/user-streams/expire', async () => ({ expired: trading.streams.expireNow() }))
  app.post('/__replay/user-streams/close', async () => ({ closed: trading.streams.closeSockets() }))
  return control
}
