import crypto from 'node:crypto'

/** A resource id: prefix + 8 random lowercase hex digits (DESIGN §5), e.g. strat_1a2b3c4d. */
export function newId(prefix: 'strat' | 'bt' | 'sw' | 'wh' | 'xk'): string {
  return `${prefix}_${crypto.randomBytes(4).toString('hex')}`
}
