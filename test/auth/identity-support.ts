import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'

/** An RSA key made for the test, as the identity provider holds it. */
export interface ProviderKey {
  kid: string
  privateKey: CryptoKey
  publicKey: CryptoKey
  jwk: JWK
}

export async function makeProviderKey(kid: string): Promise<ProviderKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  return { kid, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}

/**
 * The provider's JWKS endpoint: a real HTTP server on 127.0.0.1 serving `keys`, counting fetches.
 * `failing` makes it answer 500; close() takes it away entirely.
 */
export class JwksServer {
  keys: ProviderKey[]
  fetches = 0
  failing = false
  private constructor(
    private readonly server: http.Server,
    keys: ProviderKey[],
  ) {
    this.keys = keys
  }

  static async start(keys: ProviderKey[]): Promise<JwksServer> {
    let jwks: JwksServer | undefined
    const server = http.createServer((request, response) => {
      const self = jwks!
      self.fetches++
      if (self.failing || request.url !== '/jwks') {
        response.writeHead(self.failing ? 500 : 404).end()
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: self.keys.map((key) => key.jwk) }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    jwks = new JwksServer(server, keys)
    return jwks
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/jwks`
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** A loopback URL where nothing listens (a port just released). */
export async function deadUrl(): Promise<string> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}/jwks`
}

export const IDPA = { issuer: 'https://accounts.idpa.example', audience: 'ios-client.idpa', otherAudience: 'android-client.idpa' }
export const IDPB = { issuer: 'https://appleid.idpb.example', audience: 'com.perpetua.app' }

export function idpEnv(prefix: 'IDPA' | 'IDPB', issuer: string, audience: string, jwksUrl: string): Record<string, string> {
  return { [`${prefix}_ISSUER`]: issuer, [`${prefix}_AUDIENCE`]: audience, [`${prefix}_JWKS_URL`]: jwksUrl }
}

/** An RS256 token signed with `key` at clock time `nowMs`: one hour of life unless claims say otherwise. */
export function signToken(key: ProviderKey, claims: JWTPayload, nowMs: number, kid = key.kid): Promise<string> {
  const iat = Math.floor(nowMs / 1000)
  return new SignJWT({ iat, exp: iat + 3600, ...claims }).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key.privateKey)
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** An unsigned token (alg none), built by hand: jose refuses to make one. */
export function unsignedToken(claims: JWTPayload): string {
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`
}

/** The key-confusion attack: HS256 with the provider's public key (PEM) as the HMAC secret. */
export async function publicKeyHmacToken(key: ProviderKey, claims: JWTPayload): Promise<string> {
  const pem = await exportSPKI(key.publicKey)
  const input = `${b64({ alg: 'HS256', kid: key.kid, typ: 'JWT' })}.${b64(claims)}`
  return `${input}.${crypto.createHmac('sha256', pem).update(input).digest('base64url')}`
}
