import fs from 'node:fs'
import path from 'node:path'
import { type AlgoOrder, isOpenAlgo } from '../algo/algo-order.js'
import type { Account } from './account.js'
import type { VenueIds } from '../venue.js'

/** The `--state` file: every account with its orders, trades, income and positions, and the id counters. */
interface StateFile {
  version: 1
  ids: VenueIds
  accounts: (Omit<Account, 'balances' | 'positions' | 'config' | 'orders' | 'open' | 'algoOrders' | 'openAlgo'> & {
    balances: [string, number][]
    positions: [string, Account['positions'] extends Map<string, infer P> ? P : never][]
    config: [string, Account['config'] extends Map<string, infer C> ? C : never][]
    orders: (Account['orders'] extends Map<number, infer O> ? O : never)[]
    /** Absent in files written before algo orders existed. */
    algoOrders?: AlgoOrder[]
  })[]
}

/** Reads the state file; undefined when it does not exist yet; throws naming the file when it is not ours. */
export function readState(file: string): { ids: VenueIds; accounts: Account[] } | undefined {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  let state: StateFile
  try {
    state = JSON.parse(text) as StateFile
  } catch (error) {
    throw new Error(`replay exchange: state file ${file} is not valid JSON (${(error as Error).message})`)
  }
  if (state?.version !== 1 || !Array.isArray(state.accounts)) throw new Error(`replay exchange: ${file} is not a replay-exchange state file (version 1)`)
  return {
    ids: state.ids,
    accounts: state.accounts.map((a) => {
      const orders = new Map(a.orders.map((o) => [o.orderId, o]))
      const open = new Map([...orders].filter(([, o]) => o.status === 'NEW' || o.status === 'PARTIALLY_FILLED'))
      const algoOrders = new Map((a.algoOrders ?? []).map((o) => [o.algoId, o]))
      const openAlgo = new Map([...algoOrders].filter(([, o]) => isOpenAlgo(o)))
      return { ...a, balances: new Map(a.balances), positions: new Map(a.positions), config: new Map(a.config), orders, open, algoOrders, openAlgo }
    }),
  }
}

/** Writes the state atomically: a temporary file beside it, then a rename, so a crash leaves the old or the new file, never half of one. */
export function writeState(file: string, ids: VenueIds, accounts: Iterable<Account>): void {
  const state: StateFile = {
    version: 1,
    ids,
    accounts: [...accounts].map((a) => ({
      ...a,
      balances: [...a.balances],
      positions: [...a.positions],
      config: [...a.config],
      orders: [...a.orders.values()],
      algoOrders: [...a.algoOrders.values()],
      open: undefined as never,
      openAlgo: undefined as never,
    })),
  }
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  fs.writeFileSync(temporary, JSON.stringify(state))
  fs.renameSync(temporary, file)
}
