import { errors, jwtVerify, SignJWT } from 'jose'

/** HS256 app tokens (spec "App bearer token"): subject = user id, lifetime APP_JWT_TTL. */
export class AppTokens {
  constructor(
    private readonly secret: Uint8Array,
    private readonly ttlSeconds: number,
  ) {}

  issue(userId: number, now = Date.now()): Promise<string> {
    const issuedAt = Math.floor(now / 1000)
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(userId))
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.ttlSeconds)
      .setIssuer('perpetua')
      .sign(this.secret)
  }

  /** The user id of a valid, unexpired token; undefined for anything else. */
  async verify(token: string, now = Date.now()): Promise<number | undefined> {
    return (await this.claims(token, now))?.userId
  }

  /** The user id and expiry (Unix ms) of a valid, unexpired token; undefined for anything else. */
  async claims(token: string, now = Date.now()): Promise<{ userId: number; expiresAt: number } | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: ['HS256'],
        issuer: 'perpetua',
        currentDate: new Date(now),
      })
      const userId = Number(payload.sub)
      // issue() always sets exp; jwtVerify checked it is a number and in the future.
      return Number.isSafeInteger(userId) && userId > 0 && typeof payload.exp === 'number' ? { userId, expiresAt: payload.exp * 1000 } : undefined
    } catch (error) {
      if (error instanceof errors.JOSEError) return undefined
      throw error
    }
  }
}
