import fs from 'node:fs'
import path from 'node:path'

/**
 * PGlite has no lock on its data directory (DESIGN §4): two processes opening it corrupt it.
 * The server takes `DATA_DIR/server.lock` holding its pid; a live holder means "in use".
 */
export interface DataDirLock {
  release(): void
}

export type LockState = { held: false } | { held: true; pid: number }

const lockPath = (dataDir: string): string => path.resolve(dataDir, 'server.lock')

/**
 * The lock files this process holds. A lock naming our own pid that is not among them was left by
 * an earlier process with the same pid: in a container the server has the same pid on every start,
 * so after a crash the stale lock would otherwise name the new server and keep it from starting.
 */
const heldByThisProcess = new Set<string>()

/** Who, if anyone alive, holds the data directory. A lock left by a dead process counts as free. */
export function inspectLock(dataDir: string): LockState {
  let text: string
  try {
    text = fs.readFileSync(lockPath(dataDir), 'utf8')
  } catch {
    return { held: false }
  }
  const pid = Number.parseInt(text, 10)
  const alive = pid === process.pid ? heldByThisProcess.has(lockPath(dataDir)) : Number.isInteger(pid) && isAlive(pid)
  return alive ? { held: true, pid } : { held: false }
}

/** Takes the lock or throws a message naming the process that holds it. */
export function acquireLock(dataDir: string, role: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true })
  const file = lockPath(dataDir)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n${role}\n`, { flag: 'wx', mode: 0o600 })
      heldByThisProcess.add(file)
      return {
        release: () => {
          if (heldByThisProcess.delete(file)) releaseIfOurs(file)
        },
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const state = inspectLock(dataDir)
      if (state.held) {
        throw new Error(
          `${dataDir} is in use by another perpetua process (pid ${state.pid}); stop it first or set DATA_DIR to another folder`,
        )
      }
      fs.rmSync(file, { force: true }) // stale: its process is gone
    }
  }
  throw new Error(`could not lock ${dataDir}`)
}

function releaseIfOurs(file: string): void {
  try {
    if (Number.parseInt(fs.readFileSync(file, 'utf8'), 10) === process.pid) fs.rmSync(file, { force: true })
  } catch {
    // already gone
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
