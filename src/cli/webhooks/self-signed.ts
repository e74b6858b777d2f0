import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

// A self-signed certificate for `perpetua webhooks listen`, made with node:crypto alone: an EC P-256
// key and an X.509 v3 certificate for 127.0.0.1, ::1 and localhost, written in DER by hand (node:crypto
// reads certificates but does not make them; openssl may not be installed). The server trusts it
// through WEBHOOK_CA_FILE, so it is kept and reused: changing it would need a server restart.

export interface ListenCertificate {
  cert: string
  key: string
  /** The certificate's file: what WEBHOOK_CA_FILE names. */
  certFile: string
}

const VALID_DAYS = 3650
const RENEW_BEFORE_MS = 24 * 3600 * 1000

/** The certificate in `dir` (cert.pem, key.pem), made on first use and remade when unreadable or about to expire. */
export function listenCertificate(dir: string, now = Date.now()): ListenCertificate & { created: boolean } {
  const certFile = path.join(dir, 'cert.pem')
  const keyFile = path.join(dir, 'key.pem')
  try {
    const cert = fs.readFileSync(certFile, 'utf8')
    const key = fs.readFileSync(keyFile, 'utf8')
    const parsed = new crypto.X509Certificate(cert)
    if (Date.parse(parsed.validTo) - now > RENEW_BEFORE_MS && parsed.checkPrivateKey(crypto.createPrivateKey(key))) return { cert, key, certFile, created: false }
  } catch {
    // missing or unreadable: made below
  }
  const made = selfSignedCertificate(now)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.writeFileSync(keyFile, made.key, { mode: 0o600 })
  fs.writeFileSync(certFile, made.cert)
  return { ...made, certFile, created: true }
}

/** A new key and a certificate it signs for itself (CA:TRUE, so it can be its own trust anchor). */
export function selfSignedCertificate(now = Date.now()): { cert: string; key: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const spki = publicKey.export({ type: 'spki', format: 'der' })
  const name = seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from('perpetua webhooks listen')))))
  const algorithm = seq(oid('1.2.840.10045.4.3.2')) // ecdsa-with-SHA256
  const serial = crypto.randomBytes(16)
  serial[0]! &= 0x7f
  const extensions = seq(
    extension('2.5.29.19', true, seq(der(0x01, Buffer.from([0xff])))), // basicConstraints CA:TRUE
    extension('2.5.29.15', true, der(0x03, Buffer.from([0x02, 0x84]))), // keyUsage digitalSignature, keyCertSign
    extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage serverAuth
    extension('2.5.29.14', false, der(0x04, crypto.createHash('sha1').update(spki).digest())), // subjectKeyIdentifier
    extension('2.5.29.17', false, seq(der(0x87, Buffer.from([127, 0, 0, 1])), der(0x87, Buffer.alloc(16, 0).fill(1, 15)), der(0x82, Buffer.from('localhost')))),
  )
  const tbs = seq(
    der(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    name,
    seq(time(now - 60_000), time(now + VALID_DAYS * 24 * 3600 * 1000)),
    name,
    spki,
    der(0xa3, extensions),
  )
  const signature = crypto.sign('sha256', tbs, privateKey)
  const cert = seq(tbs, algorithm, der(0x03, Buffer.concat([Buffer.from([0]), signature])))
  return { cert: pem('CERTIFICATE', cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
}

function der(tag: number, content: Buffer): Buffer {
  const n = content.length
  const length = n < 0x80 ? Buffer.from([n]) : lengthBytes(n)
  return Buffer.concat([Buffer.from([tag]), length, content])
}

function lengthBytes(n: number): Buffer {
  const bytes: number[] = []
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const seq = (...items: Buffer[]) => der(0x30, Buffer.concat(items))
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items))

/** A non-negative INTEGER from big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  return der(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes)
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number)
  const bytes = [first! * 40 + second!]
  for (const arc of rest) {
    const digits = [arc & 0x7f]
    for (let value = arc >>> 7; value > 0; value >>>= 7) digits.unshift((value & 0x7f) | 0x80)
    bytes.push(...digits)
  }
  return der(0x06, Buffer.from(bytes))
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value))
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 §4.1.2.5). */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString() // 2026-11-27T19:30:00.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z' // 20261127193000Z
  return new Date(ms).getUTCFullYear() < 2050 ? der(0x17, Buffer.from(digits.slice(2))) : der(0x18, Buffer.from(digits))
}

function pem(label: string, body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}
