import { controlSocketPath, sendControlCommand } from '../../src/control/control-socket.js'
import { operatorCommands } from '../../src/control/commands.js'
import { loadConfig } from '../../src/config.js'
import { socketDirFor } from '../../src/db/pglite-host.js'
import { createServices } from '../../src/services.js'
import { openStorage } from '../../src/storage.js'
import type { BenchServer } from './server.js'
import type { KeyPair } from './signing.js'

/**
 * `count` API keys for one email (the user is created on first use, so every key has the same owner).
 * On an embedded server this sends the control-socket command that `perpetua keys create` sends to
 * it, without starting a node process per key: 50 CLI runs took 40 s on a 2-vCPU host. On a
 * PostgreSQL server (`databaseUrl`) it runs that command here, with the server's DATA_DIR (its master key).
 */
export async function createApiKeys(server: BenchServer, email: string, scopes: string[], count: number, databaseUrl?: string): Promise<KeyPair[]> {
  const args = { email, scopes: scopes.join(',') }
  let send: () => Promise<unknown>
  let close = async () => undefined as unknown
  if (databaseUrl) {
    const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: server.dataDir })
    const storage = await openStorage(config, 'bench')
    const services = createServices(config, storage.database)
    const handler = operatorCommands(services)['keys.create']!
    send = () => handler(args)
    close = async () => {
      await services.webhooks.close()
      await services.sandbox.close()
      await services.market.close()
      await storage.close()
    }
  } else {
    const socket = controlSocketPath(socketDirFor(server.dataDir))
    send = () => sendControlCommand(socket, 'keys.create', args)
  }
  const create = async (): Promise<KeyPair> => {
    const result = (await send()) as Partial<KeyPair>
    if (typeof result.api_key !== 'string' || typeof result.api_secret !== 'string') throw new Error(`unexpected keys.create answer: ${JSON.stringify(result)}`)
    return { api_key: result.api_key, api_secret: result.api_secret }
  }
  try {
    // The first alone, so the user row exists before the others look it up.
    const keys = [await create()]
    keys.push(...(await Promise.all(Array.from({ length: count - 1 }, create))))
    return keys
  } finally {
    await close()
  }
}
