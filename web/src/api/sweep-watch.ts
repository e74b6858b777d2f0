import { api } from './endpoints.js'
import { findInPages, followInList, waitingOutRateLimit } from './polling.js'
import type { Sweep } from './sweep-types.js'

const TERMINAL = new Set(['done', 'failed', 'cancelled'])
export const isSweepTerminal = (sweep: Sweep): boolean => TERMINAL.has(sweep.status)

/**
 * Progress is read from the sweep list, as a backtest's is from the job list: one sweep may be read
 * once per 5 s, the list only counts against the weight budget, and its rows carry the whole sweep
 * (result included), so a 2 s poll needs no GET of the sweep itself.
 */
const LIST_POLL_MS = 2_000

const kept = new Map<string, Sweep>()

/** Keeps the sweep a POST answered (or a finished one), so its page starts from it without a GET. */
export function rememberSweep(sweep: Sweep): void {
  kept.set(sweep.id, sweep)
}

export function knownSweep(sweepId: string): Sweep | undefined {
  return kept.get(sweepId)
}

/** The sweep, waiting out a 429's Retry-After; a finished one never changes, so it is kept. */
export async function readSweep(sweepId: string, signal?: AbortSignal): Promise<Sweep> {
  const known = kept.get(sweepId)
  if (known && isSweepTerminal(known)) return known
  const sweep = await waitingOutRateLimit(() => api.sweep(sweepId), signal)
  if (isSweepTerminal(sweep)) kept.set(sweepId, sweep)
  return sweep
}

/** Calls `onUpdate` with the sweep each time the list shows it changed, until it ends; returns a stop function. */
export function watchSweep(sweep: Sweep, onUpdate: (sweep: Sweep) => void, onError: (error: Error) => void): () => void {
  return followInList({
    first: sweep,
    everyMs: LIST_POLL_MS,
    find: (id) => findInPages(id, (cursor) => api.listSweeps({ limit: 100, cursor })),
    ended: isSweepTerminal,
    onUpdate: (row) => {
      if (isSweepTerminal(row)) kept.set(row.id, row)
      onUpdate(row)
    },
    onError,
  })
}
