/**
 * Deterministic pseudo-random numbers for derived values: the same symbol and time always give the
 * same number, in every process, so derived trades, ratios and funding are reproducible (never
 * Math.random).
 */

/** A 32-bit seed from a string (FNV-1a). */
export function seedOf(key: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

function mix(hash: number, value: number): number {
  // Integers up to 2^53 (Unix ms, trade ids) are mixed as two 32-bit halves.
  const low = value >>> 0
  const high = Math.floor(value / 4294967296) >>> 0
  let h = Math.imul(hash ^ low, 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13) ^ high, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** A uniform number in [0, 1) determined by a seed and integer parts. */
export function unit(seed: number, ...parts: number[]): number {
  let hash = seed
  for (const part of parts) hash = mix(hash, Math.trunc(part))
  // fmix32 (MurmurHash3 finaliser) so neighbouring inputs give unrelated outputs.
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x85ebca6b)
  hash ^= hash >>> 13
  hash = Math.imul(hash, 0xc2b2ae35)
  hash ^= hash >>> 16
  return (hash >>> 0) / 4294967296
}

/**
 * Smooth value noise in [0, 1): seeded values at multiples of `periodMs`, joined by a cosine curve,
 * so ratios and open interest drift instead of jumping at every timestamp.
 */
export function smooth(seed: number, time: number, periodMs: number): number {
  const position = time / periodMs
  const knot = Math.floor(position)
  const fraction = position - knot
  const weight = (1 - Math.cos(fraction * Math.PI)) / 2
  return unit(seed, knot) * (1 - weight) + unit(seed, knot + 1) * weight
}
