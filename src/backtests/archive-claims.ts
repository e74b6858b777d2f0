import crypto from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import type { Db } from '../db/connect.js'

/** How long a claim holds: longer than a file's download with its retries (3 × 30 s) and the batch's store. */
const LEASE_MS = 5 * 60_000
const POLL_MS = 250

/** This process's name in claims: one node, so its own jobs share its in-process downloads instead of waiting. */
export const NODE_ID: string = crypto.randomUUID()

/**
 * Takes or renews this node's leases on downloading `files` for the store: the ones this node holds now
 * (the others another node does). The database's clock times leases, so nodes' clocks need not agree.
 */
export async function claimFiles(db: Db, files: string[], node = NODE_ID): Promise<Set<string>> {
  if (files.length === 0) return new Set()
  const until = sql<string>`(extract(epoch from clock_timestamp()) * 1000)::bigint + ${LEASE_MS}`
  const taken = await db
    .insertInto('archive_claims')
    .values(files.map((file) => ({ file, node, claimed_until: until as never })))
    .onConflict((oc) =>
      oc
        .column('file')
        .doUpdateSet({ node, claimed_until: until as never })
        .where((eb) => eb.or([eb('archive_claims.node', '=', node), eb('archive_claims.claimed_until', '<', sql<string>`(extract(epoch from clock_timestamp()) * 1000)::bigint`)])),
    )
    .returning('file')
    .execute()
  return new Set(taken.map((row) => row.file))
}

/** Ends this node's leases on `files` (once their spans are stored, or given up). */
export async function releaseFiles(db: Db, files: string[], node = NODE_ID): Promise<void> {
  if (files.length === 0) return
  await db.deleteFrom('archive_claims').where('file', 'in', files).where('node', '=', node).execute()
}

/**
 * Waits while another node holds `file`: resolves 'stored' once `isStored()` says its span is in the
 * store, or 'claimed' once this node took the lease (the other node's lapsed: it died or gave up).
 */
export async function awaitFile(db: Db, file: string, isStored: () => Promise<boolean>, node = NODE_ID): Promise<'stored' | 'claimed'> {
  for (;;) {
    if (await isStored()) return 'stored'
    if ((await claimFiles(db, [file], node)).size > 0) return 'claimed'
    await sleep(POLL_MS)
  }
}
