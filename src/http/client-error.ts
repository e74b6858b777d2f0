import { METHODS } from 'node:http'
import type { Socket } from 'node:net'
import type { ConnectionError } from 'fastify'

const CLOSE_AFTER_MS = 2_000
const METHODS_HINT = 'this API uses GET, POST, PUT, PATCH and DELETE'

/** What Node's HTTP parser refuses before any route exists, by its error code. */
const STATUS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
}

/**
 * Fastify's clientErrorHandler: a request Node's parser refused (a lowercase or unknown method, a
 * malformed request line) answers in the family's error shape with a request id, as every other
 * error does, instead of Fastify's bare `{"error":"Bad Request","message":"Client Error"}`. The
 * request line is read from the bytes the parser saw, only to say what is wrong and which family.
 */
export function clientErrorHandler(nextId: () => string) {
  return (error: ConnectionError, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const [status, label] = STATUS[error.code] ?? [400, 'Bad Request']
    const line = requestLine(error.rawPacket as unknown as Buffer | undefined)
    const id = nextId()
    const message = status === 400 ? describe(line) : `${label.toLowerCase()}`
    const versioned = line.target === '/v1' || line.target.startsWith('/v1/') || line.target.startsWith('/v1?')
    const code = status === 400 ? 'INVALID_PARAMETER' : status === 408 ? 'SERVICE_UNAVAILABLE' : 'PAYLOAD_TOO_LARGE'
    const body = JSON.stringify(versioned ? { error: { code, message, request_id: id } } : { detail: message })
    // As Node's own example does: end() sends the answer before closing (the parser cannot go on).
    if (!socket.writable) return void socket.destroy(error)
    socket.end(
      `HTTP/1.1 ${status} ${label}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nx-request-id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    )
    // A client that never closes its side does not keep the socket.
    setTimeout(() => socket.destroy(), CLOSE_AFTER_MS).unref()
  }
}

interface RequestLine {
  method: string
  target: string
}

function requestLine(raw: Buffer | undefined): RequestLine {
  const first = (raw ?? Buffer.alloc(0)).toString('latin1', 0, 2048).split('\r\n', 1)[0] ?? ''
  const [method = '', target = ''] = first.split(' ')
  return { method: printable(method, 16), target: printable(target, 200) }
}

const printable = (text: string, max: number): string => text.replace(/[^\x21-\x7e]/g, '?').slice(0, max)

function describe({ method, target }: RequestLine): string {
  if (/^[a-z]+$/.test(method)) {
    return `the HTTP method "${method}" must be uppercase: send ${method.toUpperCase()} ${target || '/'} (methods are case-sensitive, and the signature hashes the uppercase method)`
  }
  if (method !== '' && !METHODS.includes(method)) return `"${method}" is not an HTTP method (${METHODS_HINT})`
  return 'the request is not valid HTTP/1.1 (its request line or headers could not be parsed)'
}
