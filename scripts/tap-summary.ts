import fs from 'node:fs'
import { pathToFileURL } from 'node:url'

/**
 * What CI's log shows of a test run whose whole TAP went to a file (.ci/run): its counts, every failure's
 * report, the slowest suites, and the file's last lines when the run never reached its counts (it was cut).
 * A whole run's TAP is about half a megabyte; a reader of CI's output that stops taking it stalls the
 * test runner in its next write, so the runs write to files and CI's log gets this.
 */
export function tapSummary(tap: string, label: string): string {
  const lines = tap.split('\n')
  const out: string[] = []
  const counts = rootCounts(lines)
  if (counts.tests === undefined) {
    out.push(`ci: ${label}: the run ended before its counts; its last lines:`, ...lines.slice(-LAST_LINES))
  } else {
    const seconds = Math.round((counts.duration_ms ?? 0) / 1000)
    out.push(`ci: ${label}: ${counts.tests} tests, ${counts.pass ?? 0} passed, ${counts.fail ?? 0} failed, ${counts.cancelled ?? 0} cancelled, ${counts.skipped ?? 0} skipped, in ${seconds} s`)
  }
  const failures = failureReports(lines)
  for (const report of failures.slice(0, MAX_FAILURES)) out.push(...report)
  if (failures.length > MAX_FAILURES) out.push(`ci: ${label}: ${failures.length - MAX_FAILURES} more failures in the TAP file`)
  const slowest = slowestSuites(lines)
  if (slowest.length > 0) out.push(`ci: ${label}: slowest suites:`, ...slowest.map(({ name, ms }) => `  ${Math.round(ms / 1000)} s  ${name}`))
  return `${out.join('\n')}\n`
}

/**
 * The test files a run's failures are in, from each failure report's `location: '<file>:<line>:<col>'`,
 * relative to `root` when under it: what .ci/run runs once more. Undefined when a failure names no file
 * (nothing to run again) or the run never reached its counts (it was cut: no time for another).
 */
export function failedFiles(tap: string, root: string): string[] | undefined {
  const lines = tap.split('\n')
  if (rootCounts(lines).tests === undefined) return undefined
  const files = new Set<string>()
  for (const report of failureReports(lines)) {
    const location = report.map((line) => /^ *location: '(.+):\d+:\d+'$/.exec(line)?.[1]).find((file) => file !== undefined)
    if (location === undefined) return undefined
    files.add(location.startsWith(`${root}/`) ? location.slice(root.length + 1) : location)
  }
  return [...files].sort()
}

const LAST_LINES = 60
const MAX_FAILURES = 40
const MAX_REPORT_LINES = 120
const SLOWEST = 10

/** The runner's own counts: `# tests 12` and the like at the file's top level. */
function rootCounts(lines: string[]): Record<string, number | undefined> {
  const counts: Record<string, number | undefined> = {}
  for (const line of lines) {
    const match = /^# (tests|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/.exec(line)
    if (match) counts[match[1]!] = Number(match[2])
  }
  return counts
}

/** Each `not ok` line with its YAML block (to the `...` at its indent), at any depth. */
function failureReports(lines: string[]): string[][] {
  const reports: string[][] = []
  for (let i = 0; i < lines.length; i++) {
    const match = /^( *)not ok /.exec(lines[i]!)
    if (!match) continue
    const end = `${match[1]}  ...`
    const report = [lines[i]!]
    for (let j = i + 1; j < lines.length && lines[j] !== end; j++) report.push(lines[j]!)
    reports.push(report.length > MAX_REPORT_LINES ? [...report.slice(0, MAX_REPORT_LINES), `${match[1]}  (cut at ${MAX_REPORT_LINES} lines)`] : report)
  }
  return reports
}

/** Top-level entries (a file's suites and tests) by their duration_ms, longest first. */
function slowestSuites(lines: string[]): { name: string; ms: number }[] {
  const suites: { name: string; ms: number }[] = []
  let name: string | undefined
  for (const line of lines) {
    const entry = /^(?:not )?ok \d+ - (.*)$/.exec(line)
    if (entry) name = entry[1]
    const duration = /^ {2}duration_ms: ([\d.]+)$/.exec(line)
    if (duration && name !== undefined) {
      suites.push({ name, ms: Number(duration[1]) })
      name = undefined
    }
  }
  return suites.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const failed = process.argv[2] === '--failed-files'
  const [file, label = file] = process.argv.slice(failed ? 3 : 2)
  if (!file) {
    process.stderr.write('usage: tap-summary <file.tap> [label] | tap-summary --failed-files <file.tap>\n')
    process.exit(2)
  }
  const tap = fs.readFileSync(file, 'utf8')
  if (!failed) process.stdout.write(tapSummary(tap, label!))
  else {
    // One file a line; exit 1 when a failure names no file, so the caller runs nothing again.
    const files = failedFiles(tap, process.cwd())
    if (files === undefined) process.exit(1)
    process.stdout.write(files.map((name) => `${name}\n`).join(''))
  }
}
