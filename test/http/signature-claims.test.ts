import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { describe, it } from 'node:test'
import { SignatureClaims, spread } from '../../src/http/signature-claims.js'

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0)
const digest = (n: number) => crypto.createHash('sha256').update(String(n)).digest()

/** A digest whose first word (the index's home) is `head`: many such share a home, or sit at the index's end and wrap. */
function collidingDigest(head: number, n: number): Buffer {
  const bytes = digest(n)
  bytes.writeInt32LE(head, 0)
  return bytes
}

const SEED = 0x5eed

/** First words whose index home (with SEED) is the index's last position for every index up to 4,096 places: they wrap. */
const lastHomes = (count: number) => {
  const found: number[] = []
  for (let word = 0; found.length < count; word++) if ((spread(word, SEED) & 0xfff) === 0xfff) found.push(word)
  return found
}

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('signature claims (typed arrays)', () => {
  it('claims a signature once until it expires, and tells a repeat how long the claim still runs', () => {
    const claims = new SignatureClaims()
    assert.equal(claims.claim(digest(1), 10_000, NOW), 0)
    assert.equal(claims.claim(digest(2), 10_000, NOW), 0, 'another signature is its own claim')
    assert.equal(claims.claim(digest(1), 10_000, NOW + 3_400), 6_600)
    assert.equal(claims.claim(digest(1), 10_000, NOW + 9_999), 1)
    assert.equal(claims.claim(digest(1), 10_000, NOW + 10_000), 0, 'claimed afresh once expired')
    assert.equal(claims.claim(digest(1), 10_000, NOW + 10_001), 9_999)
  })

  it('compares all 32 bytes: signatures that differ only in their last byte are two claims', () => {
    const claims = new SignatureClaims()
    const a = digest(7)
    const b = Buffer.from(a)
    b[31] = b[31]! ^ 1
    assert.equal(claims.claim(a, 10_000, NOW), 0)
    assert.equal(claims.claim(b, 10_000, NOW), 0)
    assert.equal(claims.claim(Buffer.from(b), 10_000, NOW), 10_000)
  })

  it("places claims by a secret of the process: first words that share their low bits do not share a home", () => {
    // A key's owner can make signatures whose first words end alike; with the raw low bits as the place they
    // would all probe one cluster. Mixed with the seed, 4,096 such words spread over the index's places.
    const homes = new Set(Array.from({ length: 4096 }, (_, n) => spread(n << 16, 12345) & 0xffff))
    assert.ok(homes.size > 3_500, `${homes.size} distinct places for 4,096 words ending in 16 zero bits`)
    assert.notEqual(spread(7, 1), spread(7, 2), 'another seed, another place')
  })

  it('refuses a digest that is not 32 bytes', () => {
    assert.throws(() => new SignatureClaims().claim(Buffer.alloc(31), 10_000, NOW), RangeError)
  })

  it('keeps a claim made afresh behind a longer-lived one, and drops it only once its own time is up', () => {
    const claims = new SignatureClaims()
    assert.equal(claims.claim(digest(100), 10_000, NOW), 0)
    assert.equal(claims.claim(digest(1), 1_000, NOW), 0)
    assert.equal(claims.claim(digest(1), 20_000, NOW + 1_000), 0, 'expired behind the longer claim: claimed afresh')
    assert.equal(claims.claim(digest(2), 1_000, NOW + 10_000), 0, 'drops the long claim and the first claim of 1')
    assert.equal(claims.claim(digest(1), 20_000, NOW + 10_000), 11_000, 'still held by its second claim')
    assert.equal(claims.claim(digest(1), 20_000, NOW + 21_000), 0)
  })

  it('holds only the claims still running: the expired leave from the front', () => {
    const claims = new SignatureClaims(4)
    for (let n = 0; n < 5_000; n++) assert.equal(claims.claim(digest(n), 10_000, NOW + n), 0)
    assert.equal(claims.held, 5_000)
    for (let n = 0; n < 5_000; n += 97) assert.equal(claims.claim(digest(n), 10_000, NOW + 5_000), 5_000 + n, `claim ${n} is held`)
    assert.equal(claims.claim(digest(-1), 10_000, NOW + 15_000), 0)
    assert.equal(claims.held, 1, 'every earlier claim expired and was dropped')
    for (let n = 0; n < 5_000; n += 97) assert.equal(claims.claim(digest(n), 10_000, NOW + 15_000), 0, `claim ${n} is made afresh`)
  })

  // The same answers as a Map of every claim, over a long random walk: repeats, a few ttls, time moving on, the
  // ring growing from 2, and digests that share their index home (probe chains, wrap-around at the index's
  // end, entries moved back when one before them leaves). The index's seed is fixed so the homes are known.
  for (const seed of [1, 2, 3]) {
    it(`answers as a map of every claim would (random walk, seed ${seed})`, () => {
      const next = random(seed)
      const claims = new SignatureClaims(2, SEED)
      const model = new Map<string, number>()
      const heads = [0, 1, ...lastHomes(3)]
      const pool = Array.from({ length: 400 }, (_, n) => (n % 3 === 0 ? collidingDigest(heads[n % heads.length]!, n) : digest(n * 1000 + seed)))
      const ttls = [1_000, 5_000, 10_000, 20_000]
      let now = NOW
      let refused = 0
      for (let step = 0; step < 40_000; step++) {
        now += Math.floor(next() * 40)
        const bytes = pool[Math.floor(next() * pool.length)]!
        const ttl = ttls[Math.floor(next() * ttls.length)]!
        const key = bytes.toString('hex')
        const held = model.get(key)
        const expected = held !== undefined && held > now ? held - now : 0
        if (expected === 0) model.set(key, now + ttl)
        else refused++
        assert.equal(claims.claim(bytes, ttl, now), expected, `step ${step}`)
      }
      assert.ok(refused > 10_000, `the walk repeats claims still held (${refused} refused)`)
      assert.ok(claims.held <= pool.length * 2, `held ${claims.held}: expired claims left`)
    })
  }
})
