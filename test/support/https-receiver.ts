import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { tempDir } from './database.js'

export interface KeyAndCert {
  key: string
  cert: string
}

/** A test CA made with openssl in this process, a server certificate it signed, and one it did not. */
export interface TestCertificates {
  /** The test CA's certificate (PEM): trust it to accept `trusted`. */
  ca: string
  /** The CA's file, for NODE_EXTRA_CA_CERTS in child processes. */
  caFile: string
  /** For 127.0.0.1, ::1 and localhost, signed by the test CA. */
  trusted: KeyAndCert
  /** The same names, self-signed: no one trusts it. */
  untrusted: KeyAndCert
}

let made: TestCertificates | undefined

export function testCertificates(): TestCertificates {
  made ??= makeCertificates()
  return made
}

function makeCertificates(): TestCertificates {
  const dir = tempDir('ca')
  const file = (name: string) => path.join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const names = 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost'
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Perpetua test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost')
  fs.writeFileSync(file('server.ext'), `${names}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`)
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'))
  openssl('req', '-x509', ...ec, '-keyout', file('self.key'), '-out', file('self.pem'), '-days', '2', '-subj', '/CN=localhost', '-addext', names)
  const read = (name: string) => fs.readFileSync(file(name), 'utf8')
  return {
    ca: read('ca.pem'),
    caFile: file('ca.pem'),
    trusted: { key: read('server.key'), cert: read('server.pem') },
    untrusted: { key: read('self.key'), cert: read('self.pem') },
  }
}

export interface ReceivedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: string
  /** Date.now() when the body had arrived. */
  at: number
}

/** What the receiver answers: a status, optionally after a delay, with extra headers (e.g. Location). */
export interface ReceiverAnswer {
  status: number
  delayMs?: number
  headers?: Record<string, string>
}

export interface HttpsReceiver {
  /** https://127.0.0.1:<port>/hook */
  url: string
  received: ReceivedRequest[]
  /** How the next requests are answered; change it at any time (default 204). */
  answer: (request: ReceivedRequest) => ReceiverAnswer
  /** Resolves once `count` requests have arrived; throws after timeoutMs. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>
  close(): Promise<void>
}

/** A real HTTPS server on 127.0.0.1 that records every request; certificate from the test CA unless untrusted. */
export async function startHttpsReceiver(
  options: { untrusted?: boolean; answer?: HttpsReceiver['answer']; /** Keep requests in `received` (default true). */ record?: boolean } = {},
): Promise<HttpsReceiver> {
  const certificates = testCertificates()
  const waiters = new Set<() => void>()
  const receiver: HttpsReceiver = {
    url: '',
    received: [],
    answer: options.answer ?? (() => ({ status: 204 })),
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (receiver.received.length < count) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve(receiver.received.slice(0, count))
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`the receiver got ${receiver.received.length} of ${count} requests in ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  const server = https.createServer(options.untrusted ? certificates.untrusted : certificates.trusted, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      if (options.record !== false) receiver.received.push(request)
      for (const waiter of [...waiters]) waiter()
      const answer = receiver.answer(request)
      const send = () => {
        if (res.destroyed) return
        res.writeHead(answer.status, answer.headers)
        res.end()
      }
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref()
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}

/**
 * The receiver's side of Standard Webhooks, written from the specification and independent of the
 * service's signer: the key is the secret's base64url decoding (a `whsec_` prefix is dropped), the
 * signed content `id.timestamp.body`, and any `v1,` entry of the space-separated header may match.
 */
export function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string, toleranceS = 300, nowMs = Date.now()): boolean {
  const id = headers['webhook-id']
  const timestamp = headers['webhook-timestamp']
  const signatures = headers['webhook-signature']
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return false
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64url')
  const expected = crypto.createHmac('sha256', key).update(Buffer.from(`${id}.${timestamp}.${body}`, 'utf8')).digest()
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2)
    if (version !== 'v1' || value === undefined) return false
    const given = Buffer.from(value, 'base64')
    return given.length === expected.length && crypto.timingSafeEqual(given, expected)
  })
}
