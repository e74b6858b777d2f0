import { controlSocketPath, sendControlCommand } from '../../src/control/control-socket.js'
import { socketDirFor } from '../../src/db/pglite-host.js'
import type { BenchServer } from './server.js'
import type { KeyPair } from './signing.js'

/**
 * `count` API keys for one email (the user is created on first use, so every key has the same owner).
 * This sends the control-socket command that `perpetua keys create` sends to a running embedded server,
 * without starting a node process per key: 50 CLI runs took 40 s on a 2-vCPU host.
 */
export async function createApiKeys(server: BenchServer, email: string, scopes: string[], count: number): Promise<KeyPair[]> {
  const socket = controlSocketPath(socketDirFor(server.dataDir))
  const create = async (): Promise<KeyPair> => {
    const result = (await sendControlCommand(socket, 'keys.create', { email, scopes: scopes.join(',') })) as Partial<KeyPair>
    if (typeof result.api_key !== 'string' || typeof result.api_secret !== 'string') throw new Error(`unexpected keys.create answer: ${JSON.stringify(result)}`)
    return { api_key: result.api_key, api_secret: result.api_secret }
  }
  // The first alone, so the user row exists before the others look it up.
  const keys = [await create()]
  keys.push(...(await Promise.all(Array.from({ length: count - 1 }, create))))
  return keys
}
