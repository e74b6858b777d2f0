import fs from 'node:fs'
import path from 'node:path'

/** The parts of a V8 .cpuprofile (as written by node --cpu-prof) that the summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface ProfileSummary {
  file: string
  /** Thread id from the file name: 0 is the main (HTTP) thread, others are worker threads (PGlite). */
  thread: number
  /** Sampled time inside the window. */
  sampled_ms: number
  /** Share of that time the thread was idle (waiting in the event loop). */
  idle_pct: number
  /** Self time by area: node_modules package, our code (dist/...), node internals, GC. */
  by_area: { area: string; pct: number }[]
  /** Functions by self time. */
  top_self: { fn: string; pct: number }[]
  /** Functions by inclusive time (self plus callees), leaving out the event-loop roots. */
  top_inclusive: { fn: string; pct: number }[]
}

/**
 * Summarises every profile in `dir` over the samples taken inside [startUs, endUs]. V8 stamps samples
 * with the monotonic clock that process.hrtime reads on Linux, so the bench's own hrtime readings
 * around a load run cut the server's profile to that run.
 */
export function summariseProfiles(dir: string, window: { startUs: number; endUs: number }, top = 12): ProfileSummary[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort()
    .map((name) => summariseProfile(path.join(dir, name), window, top))
}

function summariseProfile(file: string, window: { startUs: number; endUs: number }, top: number): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const areas = new Map<string, number>()
  let total = 0
  let idle = 0
  let time = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0
    if (time < window.startUs || time > window.endUs) continue
    const weight = profile.timeDeltas[i + 1] ?? 0 // the time until the next sample is what this one stands for
    const node = byId.get(profile.samples[i]!)
    if (!node) continue
    total += weight
    const name = node.callFrame.functionName
    if (name === '(idle)') {
      idle += weight
      continue
    }
    add(self, label(node.callFrame), weight)
    add(areas, area(node.callFrame), weight)
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame
      if (frame.functionName.startsWith('(') && frame.url === '') continue // (root), (program), ...
      const key = label(frame)
      if (seen.has(key)) continue
      seen.add(key)
      add(inclusive, key, weight)
    }
  }
  const pct = (value: number) => (total === 0 ? 0 : Math.round((1000 * value) / total) / 10)
  const ranked = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top)
  return {
    file,
    thread: Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[1] ?? -1),
    sampled_ms: Math.round(total / 1000),
    idle_pct: pct(idle),
    by_area: ranked(areas).map(([name, value]) => ({ area: name, pct: pct(value) })),
    top_self: ranked(self).map(([fn, value]) => ({ fn, pct: pct(value) })),
    top_inclusive: ranked(inclusive).map(([fn, value]) => ({ fn, pct: pct(value) })),
  }
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value)
}

function label(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const where = frame.url === '' ? '' : ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}`
  return `${frame.functionName || '(anonymous)'}${where}`
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/')
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length)
  const dist = url.lastIndexOf('/dist/')
  if (dist >= 0) return url.slice(dist + 1)
  return url
}

function area(frame: CpuProfile['nodes'][number]['callFrame']): string {
  if (frame.url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)'
  if (frame.url.startsWith('node:')) return 'node internals'
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame.url)
  if (match) return match[1]!
  if (frame.url.includes('/dist/')) return 'perpetua (dist/)'
  return frame.url
}
