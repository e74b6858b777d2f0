import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Db } from './connect.js'

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations')

/** Reads `migrations/NNNN_name.sql`; each file runs as one statement batch in Kysely's migration transaction. */
class SqlFileProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {}
    for (const name of await knownMigrations()) {
      const text = await fs.readFile(path.join(MIGRATIONS_DIR, `${name}.sql`), 'utf8')
      migrations[name] = { up: async (db) => void (await sql.raw(text).execute(db)) }
    }
    return migrations
  }
}

/** The migrations this code knows, in the order they apply (`0023_module_cost` …). */
export async function knownMigrations(): Promise<string[]> {
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort()
  return files.map((file) => file.replace(/\.sql$/, ''))
}

/** Applies pending migrations. Kysely's migrator holds an advisory lock, so many nodes may start at once. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrations = await new SqlFileProvider().getMigrations()
  if (await allApplied(db, Object.keys(migrations))) return []
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** The names of the migrations this code knows, in order. */
export async function migrationNames(): Promise<string[]> {
  return Object.keys(await new SqlFileProvider().getMigrations())
}

/** Which of `names` the database has not applied (all of them when it was never migrated). */
export async function pendingMigrations(db: Db, names: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db).catch((error: unknown) => {
    // undefined_table: never migrated. Anything else is the database failing, which the caller reports as such.
    if ((error as { code?: string }).code === '42P01') return { rows: [] as { name: string }[] }
    throw error
  })
  const applied = new Set(rows.map((row) => row.name))
  return names.filter((name) => !applied.has(name))
}

/**
 * Whether the database records exactly these migrations (Kysely's table), read in one query. Every
 * start but the first finds nothing to do, and the migrator's way to find that out (its tables
 * ensured, its lock taken, its rows read: ~10 statements) was 120–330 ms of a warm embedded start
 * at load 9–10. Anything else (no table yet, one missing, one unknown) goes through the migrator,
 * which applies or reports it under its lock.
 */
async function allApplied(db: Kysely<unknown>, names: string[]): Promise<boolean> {
  let applied: Set<string>
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db)
    applied = new Set(rows.map((row) => row.name))
  } catch {
    return false // a database never migrated has no kysely_migration table
  }
  return applied.size === names.length && names.every((name) => applied.has(name))
}
