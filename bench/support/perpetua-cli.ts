import { spawn } from 'node:child_process'
import path from 'node:path'
import { type BenchServer, exitCodeOf, REPO_ROOT } from './server.js'
import type { KeyPair } from './signing.js'

/** Runs `node dist/cli.js ...args` with the server's environment (so it runs inside that server); returns stdout. */
export async function runCli(server: BenchServer, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), ...args], {
    cwd: REPO_ROOT,
    env: server.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await exitCodeOf(child)
  if (code !== 0) throw new Error(`perpetua ${args.join(' ')} exited with code ${code}: ${stderr.trim()}`)
  return stdout
}

/** `perpetua keys create`: the user (by email) is created on first use, so every key here shares one owner. */
export async function createApiKey(server: BenchServer, email: string, scopes: string[]): Promise<KeyPair> {
  const out = await runCli(server, ['keys', 'create', '--email', email, '--scopes', scopes.join(',')])
  const parsed = JSON.parse(out) as Partial<KeyPair>
  if (typeof parsed.api_key !== 'string' || typeof parsed.api_secret !== 'string') throw new Error(`unexpected keys create output: ${out}`)
  return { api_key: parsed.api_key, api_secret: parsed.api_secret }
}

/**
 * `count` keys for one email. The first runs alone so the user row exists before the rest race to
 * find it; the rest run a few at a time (each is a node process start, ~0.3 s).
 */
export async function createApiKeys(server: BenchServer, email: string, scopes: string[], count: number, parallel = 8): Promise<KeyPair[]> {
  const keys = [await createApiKey(server, email, scopes)]
  while (keys.length < count) {
    const batch = Math.min(parallel, count - keys.length)
    keys.push(...(await Promise.all(Array.from({ length: batch }, () => createApiKey(server, email, scopes)))))
  }
  return keys
}
