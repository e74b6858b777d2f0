import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose'
import type { IdentityProviderConfig } from '../../config.js'
import { AppError } from '../../http/errors.js'

export type ProviderName = 'idpa' | 'idpb'

/** What a verified identity token says about its holder. */
export interface VerifiedIdentity {
  provider: ProviderName
  subject: string
  /** Lower-cased and verified; undefined when the token carries none (idpb after the first sign-in). */
  email: string | undefined
  name: string | undefined
}

export interface ProviderRules {
  /** idpa puts a verified email in every token; idpb only in the first one of each user. */
  emailAlways: boolean
}

/** The skew allowed on exp, nbf and iat (issue 6: at most 60 s). */
export const CLOCK_TOLERANCE_S = 60
/** The least time between two key-set fetches caused by tokens naming a key we do not have. */
export const UNKNOWN_KEY_REFETCH_COOLDOWN_MS = 30_000
/** Keys are fetched again after this long even when every token names a known key (jose's default). */
const KEY_SET_MAX_AGE_MS = 10 * 60_000
/** A sign-in waits at most this long for the provider's key set. */
const KEY_SET_TIMEOUT_MS = 3_000
const MAX_SUBJECT_LENGTH = 255
const MAX_EMAIL_LENGTH = 320

/** Raised inside the key lookup when the provider's key set cannot be had: a 503, not the token's fault. */
class KeySetUnavailable extends Error {}

/**
 * One identity provider: RS256 id tokens verified against its JWKS (IDPx_JWKS_URL), issuer list
 * (IDPx_ISSUER) and audience list (IDPx_AUDIENCE, the app's client ids), with the app clock.
 */
export class IdentityProvider {
  private readonly issuers: string[]
  private readonly audiences: string[]
  private readonly keys: ProviderKeys | undefined
  /** The settings this provider lacks to be usable. */
  private readonly missing: string[]

  constructor(
    readonly name: ProviderName,
    settings: IdentityProviderConfig,
    private readonly rules: ProviderRules,
    private readonly now: () => number,
  ) {
    this.issuers = list(settings.issuer)
    this.audiences = list(settings.audience)
    const prefix = name.toUpperCase()
    this.missing = [
      ...(settings.jwksUrl === undefined ? [`${prefix}_JWKS_URL`] : []),
      ...(this.issuers.length === 0 ? [`${prefix}_ISSUER`] : []),
      ...(this.audiences.length === 0 ? [`${prefix}_AUDIENCE`] : []),
    ]
    // Never half-configured: a token is only accepted with its signature, issuer and audience all checked.
    this.keys = settings.jwksUrl !== undefined && this.missing.length === 0 ? new ProviderKeys(new URL(settings.jwksUrl), now) : undefined
  }

  /** The identity in `token`; 401 for any token that is not a valid, verified-email one, 503 when the keys cannot be fetched. */
  async verify(token: string): Promise<VerifiedIdentity> {
    if (!this.keys) throw new AppError('SERVICE_UNAVAILABLE', `sign-in with ${this.name} is not configured on this server: ${this.missing.join(', ')} not set`)
    const now = this.now()
    // Checked before any key is fetched: junk never costs a request to the provider, and a token that
    // is invalid on its face is a 401 even while the provider's keys cannot be fetched.
    const unverified = this.decode(token)
    const problem = this.claimProblem(unverified, now)
    if (problem) throw this.invalid(problem)
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, this.keys.getKey, {
        algorithms: ['RS256'],
        issuer: this.issuers,
        audience: this.audiences,
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(now),
        requiredClaims: ['sub', 'exp', 'iat'],
      }))
    } catch (error) {
      if (error instanceof KeySetUnavailable) {
        const failure = new AppError('SERVICE_UNAVAILABLE', `the signing keys of ${this.name} cannot be fetched right now; try again shortly`)
        failure.cause = error.cause
        throw failure
      }
      if (error instanceof errors.JWKSNoMatchingKey) throw this.invalid('it is signed with a key the provider does not publish')
      if (error instanceof errors.JWSSignatureVerificationFailed) throw this.invalid('its signature does not verify')
      if (error instanceof errors.JOSEError) throw this.invalid(error.message)
      throw error
    }
    return this.identity(payload)
  }

  private decode(token: string): JWTPayload {
    let alg: unknown
    try {
      alg = decodeProtectedHeader(token).alg
    } catch {
      throw this.invalid('it is not a JWT')
    }
    // HS256 here would be the key-confusion attack (the public key used as an HMAC secret); none is unsigned.
    if (alg !== 'RS256') throw this.invalid(`only RS256 signatures are accepted, not ${JSON.stringify(alg)}`)
    try {
      return decodeJwt(token)
    } catch {
      throw this.invalid('it is not a well-formed JWT')
    }
  }

  private claimProblem(claims: JWTPayload, now: number): string | undefined {
    const seconds = now / 1000
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > MAX_SUBJECT_LENGTH) return 'it has no valid subject (sub)'
    if (typeof claims.iss !== 'string' || !this.issuers.includes(claims.iss)) return `its issuer ${JSON.stringify(claims.iss)} is not accepted`
    const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : []
    if (!audiences.some((audience) => this.audiences.includes(audience))) return `its audience ${JSON.stringify(claims.aud)} is not this app`
    if (typeof claims.exp !== 'number') return 'it has no expiry (exp)'
    if (claims.exp <= seconds - CLOCK_TOLERANCE_S) return `it expired at ${new Date(claims.exp * 1000).toISOString()}`
    if (typeof claims.nbf === 'number' && claims.nbf > seconds + CLOCK_TOLERANCE_S) return 'it is not valid yet (nbf)'
    if (typeof claims.iat !== 'number') return 'it has no issue time (iat)'
    if (claims.iat > seconds + CLOCK_TOLERANCE_S) return 'it was issued in the future (iat)'
    return undefined
  }

  private identity(payload: JWTPayload): VerifiedIdentity {
    const rawEmail = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : ''
    // idpb sends email_verified as the string "true"; idpa as a boolean.
    const verified = payload.email_verified === true || payload.email_verified === 'true'
    if (rawEmail === '') {
      if (this.rules.emailAlways) throw this.invalid('it carries no email address')
    } else {
      if (!verified) throw this.invalid('its email address is not verified')
      if (rawEmail.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+$/.test(rawEmail)) throw this.invalid('its email address is malformed')
    }
    const name = typeof payload.name === 'string' && payload.name.trim() !== '' ? payload.name.trim().slice(0, 200) : undefined
    return { provider: this.name, subject: payload.sub!, email: rawEmail === '' ? undefined : rawEmail, name }
  }

  private invalid(why: string): AppError {
    return new AppError('UNAUTHENTICATED', `the ${this.name} token is invalid: ${why}`)
  }
}

/**
 * The provider's JWKS through jose's remote key set (cached, fetches coalesced). jose's own refetch on
 * an unknown `kid` is turned off (cooldown ∞) and done here instead, with the cooldown measured on the
 * app clock: a flood of tokens naming made-up keys costs the provider one fetch per 30 s, and tests can
 * move time instead of sleeping.
 */
class ProviderKeys {
  private readonly remote: ReturnType<typeof createRemoteJWKSet>
  private lastUnknownKeyFetch = Number.NEGATIVE_INFINITY
  /** Why that fetch failed (the key set unavailable), or undefined when it succeeded. */
  private lastUnknownKeyFetchFailure: unknown

  constructor(
    url: URL,
    private readonly now: () => number,
  ) {
    this.remote = createRemoteJWKSet(url, {
      cacheMaxAge: KEY_SET_MAX_AGE_MS,
      cooldownDuration: Number.POSITIVE_INFINITY,
      timeoutDuration: KEY_SET_TIMEOUT_MS,
    })
  }

  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await this.remote(header, token)
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw keyProblem(error)
      const now = this.now()
      // Inside the cooldown the last fetch's outcome stands: keys that could not be fetched are still a
      // 503 (the provider is down, the token may be fine), not a 401 for a key we merely failed to see.
      if (now - this.lastUnknownKeyFetch < UNKNOWN_KEY_REFETCH_COOLDOWN_MS) throw this.lastUnknownKeyFetchFailure ?? error
      this.lastUnknownKeyFetch = now
    }
    // The provider may have rotated its keys since we fetched them: fetch once more, then look again.
    try {
      await this.remote.reload()
      this.lastUnknownKeyFetchFailure = undefined
    } catch (error) {
      this.lastUnknownKeyFetchFailure = keyProblem(error)
      throw this.lastUnknownKeyFetchFailure
    }
    try {
      return await this.remote(header, token)
    } catch (error) {
      throw keyProblem(error)
    }
  }
}

/** Errors about the token's choice of key pass as they are; anything else (network, time-out, a bad key set) is the keys being unavailable. */
function keyProblem(error: unknown): unknown {
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return error
  return new KeySetUnavailable('the key set cannot be fetched', { cause: error })
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
}
