import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

/**
 * While `perpetua serve` runs on an embedded database it owns that database (single session, one
 * process). CLI commands such as `keys create` then run inside the server through this unix socket:
 * one JSON request line in, one JSON response line out, after it any number of `{"progress": "…"}`
 * lines from a long command (a backup). The socket file is mode 0600, like DATA_DIR.
 */
export type CommandHandler = (args: Record<string, unknown>, progress?: (message: string) => void) => Promise<unknown>

export function controlSocketPath(socketDir: string): string {
  return path.join(socketDir, 'control.sock')
}

export async function serveControlSocket(socketPath: string, handlers: Record<string, CommandHandler>): Promise<() => Promise<void>> {
  fs.rmSync(socketPath, { force: true })
  const server = net.createServer((socket) => {
    let buffer = ''
    socket.setEncoding('utf8')
    socket.on('error', () => socket.destroy())
    socket.on('data', (chunk: string) => {
      buffer += chunk
      if (buffer.length > 64 * 1024) return socket.destroy()
      const newline = buffer.indexOf('\n')
      if (newline < 0) return
      const progress = (message: string) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify({ progress: message })}\n`)
      }
      void answer(buffer.slice(0, newline), progress).then((reply) => socket.end(`${JSON.stringify(reply)}\n`))
    })
  })
  const answer = async (line: string, progress: (message: string) => void) => {
    try {
      const { command, args } = JSON.parse(line) as { command: string; args: Record<string, unknown> }
      const handler = Object.hasOwn(handlers, command) ? handlers[command] : undefined
      if (!handler) return { ok: false, error: `unknown command ${command}` }
      return { ok: true, result: await handler(args ?? {}, progress) }
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) }
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, () => resolve())
  })
  fs.chmodSync(socketPath, 0o600)
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      fs.rmSync(socketPath, { force: true })
    })
}

/**
 * Sends one command to a running server; rejects with the server's error message. `timeoutMs` bounds
 * a silence (each progress line restarts it); `onProgress` gets the command's progress lines.
 */
export function sendControlCommand(
  socketPath: string,
  command: string,
  args: Record<string, unknown>,
  { timeoutMs = 15_000, onProgress }: { timeoutMs?: number; onProgress?: (message: string) => void } = {},
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath)
    let buffer = ''
    socket.setEncoding('utf8')
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer from the running server within ${timeoutMs} ms`)))
    socket.on('connect', () => socket.write(`${JSON.stringify({ command, args })}\n`))
    socket.on('data', (chunk: string) => {
      buffer += chunk
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline)
        const progress = progressOf(line)
        if (progress === undefined) return // the reply, read whole on 'end'
        buffer = buffer.slice(newline + 1)
        onProgress?.(progress)
      }
    })
    socket.on('error', reject)
    socket.on('end', () => {
      try {
        const reply = JSON.parse(buffer) as { ok: boolean; result?: unknown; error?: string }
        if (reply.ok) resolve(reply.result)
        else reject(new Error(reply.error))
      } catch {
        reject(new Error('the running server gave no readable answer'))
      }
    })
  })
}

function progressOf(line: string): string | undefined {
  if (!line.startsWith('{"progress":')) return undefined
  const { progress } = JSON.parse(line) as { progress?: unknown }
  return typeof progress === 'string' ? progress : undefined
}
