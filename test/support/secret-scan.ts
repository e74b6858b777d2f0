import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { pino } from 'pino'
import type { Db } from '../../src/db/connect.js'

/** A secret to look for, with a name for the failure message (never the secret itself). */
export interface KnownSecret {
  label: string
  value: string
}

export interface TextCell {
  where: string
  text: string
}

// Column types that can hold a secret as text: text and varchar, json and jsonb, arrays of text.
const TEXT_TYPES = new Set(['text', 'character varying', 'character', 'json', 'jsonb'])
const TEXT_ARRAYS = new Set(['_text', '_varchar', '_bpchar', '_json', '_jsonb'])

/**
 * Every text, JSON and text-array column of every table outside the system schemas, as text (found
 * through information_schema.columns, so tables added later are covered without a change here).
 */
export async function textColumnDump(db: Db): Promise<TextCell[]> {
  const columns = await sql<{ table_schema: string; table_name: string; column_name: string; data_type: string; udt_name: string }>`
    SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.udt_name
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
    ORDER BY 1, 2, 3`.execute(db)
  const cells: TextCell[] = []
  for (const column of columns.rows) {
    if (!TEXT_TYPES.has(column.data_type) && !(column.data_type === 'ARRAY' && TEXT_ARRAYS.has(column.udt_name))) continue
    const ref = sql.id(column.table_schema, column.table_name, column.column_name)
    const rows = await sql<{ text: string }>`SELECT ${ref}::text AS text FROM ${sql.id(column.table_schema, column.table_name)} WHERE ${ref} IS NOT NULL`.execute(db)
    const where = `${column.table_schema}.${column.table_name}.${column.column_name}`
    for (const row of rows.rows) cells.push({ where, text: row.text })
  }
  return cells
}

/** Where each secret appears in plain text (in the database dump or a log): "label in place". Empty when nowhere. */
export function secretsFound(cells: TextCell[], secrets: KnownSecret[]): string[] {
  const found: string[] = []
  for (const secret of secrets) {
    if (secret.value.length < 8) throw new Error(`secret ${secret.label} is too short to search for meaningfully`)
    for (const cell of cells) if (cell.text.includes(secret.value)) found.push(`${secret.label} in ${cell.where}`)
  }
  return found
}

/** A pino logger at trace level writing into memory, for an app under test whose logs are then scanned. */
export function memoryLogger(): { logger: pino.Logger; lines: () => TextCell[] } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'))
      done()
    },
  })
  const logger = pino({ level: 'trace' }, stream)
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean).map((text, i) => ({ where: `log line ${i + 1}`, text })) }
}
