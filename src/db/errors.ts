/** True when a PostgreSQL error is a unique-constraint violation (SQLSTATE 23505), optionally on one constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint)
}

/** True when a PostgreSQL error is a foreign-key violation (SQLSTATE 23503): the referenced row is gone. */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23503'
}

/** True for a deadlock (40P01) or serialization failure (40001): the statement wrote nothing and may run again. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '40P01' || code === '40001'
}
