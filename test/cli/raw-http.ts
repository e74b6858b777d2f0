import net from 'node:net'

/** A plain TCP connection to a server on 127.0.0.1, to write a request by hand (a slow client, one in flight). */
export function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Resolves with everything the socket has sent once `done(text)` holds or the peer ends; rejects on a deadline. */
export function readUntil(socket: net.Socket, done: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const finish = (error?: Error) => {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('end', onEnd)
      socket.off('error', onError)
      if (error) reject(error)
      else resolve(text)
    }
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8')
      if (done(text)) finish()
    }
    const onEnd = () => finish()
    const onError = (error: Error) => finish(error)
    const timer = setTimeout(() => finish(new Error(`no complete answer within ${timeoutMs} ms; got ${JSON.stringify(text)}`)), timeoutMs)
    socket.on('data', onData)
    socket.on('end', onEnd)
    socket.on('error', onError)
  })
}

/** True once a complete HTTP/1.1 response with a Content-Length body is in `text`. */
export function completeResponse(text: string): boolean {
  const split = text.indexOf('\r\n\r\n')
  if (split < 0 || text.startsWith('HTTP/1.1 100')) return false
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))
  return length !== null && Buffer.byteLength(text.slice(split + 4)) >= Number(length[1])
}
