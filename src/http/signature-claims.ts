import crypto from 'node:crypto'

/** A SHA-256 digest as 32-bit words. */
const WORDS = 8

/**
 * The signatures an embedded node has accepted, each held until its claim expires, kept in typed arrays
 * with no heap object per claim. A claim lives 10 s, far longer than the young generation, so in a Map each
 * one (a 68-character key and its entry) was promoted and left for a full collection: at 4,000 signed
 * requests a second, ~40,000 of them (3.9 MB measured) turned over in the old generation every 10 s. The collector is
 * about a third of the signed read's CPU (perf, issue 36); this is the part of it the guard caused by design.
 *
 * The claims sit in a ring in the order made (a claim's 32 bytes and its expiry), found through an open-
 * addressing index of ring slots (linear probing, at most half full). Expired claims leave from the ring's
 * front: ttls are few and time advances, so the front expires first, and a claim behind a longer-lived one
 * waits for it but is seen as expired when looked up. Memory follows the most claims held at once: the ring
 * doubles when full and never shrinks (40 bytes a claim, plus 8 in the index).
 *
 * A claim's place in the index is its first word mixed with a secret of this process: a key's owner can
 * compute as many of his signatures as he likes, and with the raw low bits as the place he could send many
 * that share one, making every lookup walk a long cluster (the flooding that V8's seeded string hash spares
 * a Map).
 */
export class SignatureClaims {
  private words!: Int32Array
  private expiresAt!: Float64Array
  private index!: Int32Array
  private mask = 0
  private first = 0
  private size = 0

  /** `seed`: the process's secret for the index (random; a test may fix it). */
  constructor(
    capacity = 1024,
    private readonly seed = crypto.randomBytes(4).readInt32LE(0),
  ) {
    this.allocate(2 ** Math.ceil(Math.log2(Math.max(2, capacity))))
  }

  /** How many claims are held (expired ones not yet dropped included). */
  get held(): number {
    return this.size
  }

  /** 0 when `digest` (32 bytes) is claimed now, until `now + ttlMs`; else the ms its held claim still runs. */
  claim(digest: Buffer, ttlMs: number, now: number): number {
    if (digest.length !== WORDS * 4) throw new RangeError(`a signature claim is 32 bytes, not ${digest.length}`)
    this.dropExpired(now)
    const at = this.find(digest)
    if (at >= 0) {
      const slot = this.index[at]! - 1
      const expiresAt = this.expiresAt[slot]!
      if (expiresAt > now) return expiresAt - now
      // Expired behind a longer-lived claim: taken out here, left in the ring as a gap the front skips.
      this.expiresAt[slot] = Number.NaN
      this.removeAt(at)
    }
    this.add(digest, now + ttlMs)
    return 0
  }

  private add(digest: Buffer, expiresAt: number): void {
    const capacity = this.expiresAt.length
    if (this.size === capacity) this.allocate(capacity * 2)
    const slot = (this.first + this.size) % this.expiresAt.length
    for (let w = 0; w < WORDS; w++) this.words[slot * WORDS + w] = digest.readInt32LE(w * 4)
    this.expiresAt[slot] = expiresAt
    this.size++
    this.indexSlot(slot)
  }

  /** The index position a claim whose first word is `word` starts from. */
  private home(word: number): number {
    return spread(word, this.seed) & this.mask
  }

  private indexSlot(slot: number): void {
    let at = this.home(this.words[slot * WORDS]!)
    while (this.index[at] !== 0) at = (at + 1) & this.mask
    this.index[at] = slot + 1
  }

  /** The index position holding `digest`, or -1. */
  private find(digest: Buffer): number {
    for (let at = this.home(digest.readInt32LE(0)); this.index[at] !== 0; at = (at + 1) & this.mask) {
      const base = (this.index[at]! - 1) * WORDS
      let w = 0
      while (w < WORDS && this.words[base + w] === digest.readInt32LE(w * 4)) w++
      if (w === WORDS) return at
    }
    return -1
  }

  /** The index position holding ring slot `slot`. */
  private positionOf(slot: number): number {
    let at = this.home(this.words[slot * WORDS]!)
    while (this.index[at] !== slot + 1) at = (at + 1) & this.mask
    return at
  }

  /** Empties index position `at`, moving back the entries after it that would no longer be reached (linear probing's deletion). */
  private removeAt(at: number): void {
    let hole = at
    this.index[hole] = 0
    for (let next = (hole + 1) & this.mask; this.index[next] !== 0; next = (next + 1) & this.mask) {
      const home = this.home(this.words[(this.index[next]! - 1) * WORDS]!)
      // The entry stays when its home lies cyclically after the hole and at or before its place.
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next
      if (stays) continue
      this.index[hole] = this.index[next]!
      this.index[next] = 0
      hole = next
    }
  }

  private dropExpired(now: number): void {
    const capacity = this.expiresAt.length
    while (this.size > 0) {
      const expiresAt = this.expiresAt[this.first]!
      if (expiresAt > now) return
      if (!Number.isNaN(expiresAt)) this.removeAt(this.positionOf(this.first))
      this.first = (this.first + 1) % capacity
      this.size--
    }
  }

  /** Room for `capacity` claims (a power of two: the index is masked), the held ones copied in ring order and indexed afresh. */
  private allocate(capacity: number): void {
    const old = this.size > 0 ? { words: this.words, expiresAt: this.expiresAt, first: this.first } : undefined
    this.words = new Int32Array(capacity * WORDS)
    this.expiresAt = new Float64Array(capacity)
    this.index = new Int32Array(capacity * 2)
    this.mask = capacity * 2 - 1
    const size = this.size
    this.first = 0
    this.size = 0
    if (!old) return
    for (let n = 0; n < size; n++) {
      const from = (old.first + n) % old.expiresAt.length
      const expiresAt = old.expiresAt[from]!
      this.words.set(old.words.subarray(from * WORDS, from * WORDS + WORDS), n * WORDS)
      this.expiresAt[n] = expiresAt
      this.size++
      if (!Number.isNaN(expiresAt)) this.indexSlot(n)
    }
  }
}

/** A digest's first word mixed with `seed` (murmur3's 32-bit finalizer): every bit of both moves the low bits. */
export function spread(word: number, seed: number): number {
  let h = word ^ seed
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}
