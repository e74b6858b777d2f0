import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { anchors } from '../support/markdown-anchors.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const RULES = 'ops/prometheus/alerts.yml'
const RULE_TESTS = 'ops/prometheus/alerts.test.yml'
/** A real /metrics answer recorded by the metrics scenario test: the names the rules may rely on. */
const SCRAPE = 'test/ops/fixtures/metrics-scrape.txt'
const GUIDE = 'docs/operating.md'
/** Issue 32's alerts, by the names its shared design fixed. */
const ALERTS = [
  'PerpetuaRunBehind',
  'PerpetuaLiveRunError',
  'PerpetuaProtectiveOrderMissing',
  'PerpetuaJobQueueStale',
  'PerpetuaWebhookFailureRate',
  'PerpetuaWebhookBacklog',
  'PerpetuaUpstreamWeightNearLimit',
  'PerpetuaHigh5xxRate',
  'PerpetuaNotReady',
  'PerpetuaRunLeasesNotRenewed',
]

interface AlertRule {
  alert?: string
  record?: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts?: { exp_labels?: Record<string, string> }[] }[]
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')
const rules = (): AlertRule[] => (parse(read(RULES)) as { groups: { rules: AlertRule[] }[] }).groups.flatMap((group) => group.rules)

/** Runs promtool from the repository's root; a machine without it fails with how to get it (a skip would pass unchecked rules). */
function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile('promtool', args, { cwd: ROOT }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
        reject(new Error("promtool is not on PATH: install Debian's prometheus package (apt-get install --no-install-recommends prometheus), as .ci/run does"))
      } else resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr })
    })
  })
}

/** Every metric family of a Prometheus text scrape with the label names its samples carry (a histogram's `le` aside). */
function scrapedFamilies(text: string): Map<string, Set<string>> {
  const families = new Map<string, Set<string>>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\w+) \w+$/.exec(line)
    if (type) families.set(type[1]!, new Set())
  }
  for (const line of text.split('\n')) {
    const sample = /^(\w+)(?:\{(.*)\})? \S+$/.exec(line)
    if (!sample) continue
    const name = sample[1]!
    const family = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '')
    const labels = [...(sample[2] ?? '').matchAll(/(\w+)="/g)].map((match) => match[1]!).filter((label) => label !== 'le')
    for (const each of new Set([name, family])) families.set(each, new Set([...(families.get(each) ?? []), ...labels]))
  }
  return families
}

/** The perpetua_* selectors of a PromQL expression, each with the label names it matches on. */
function selectors(expr: string): { metric: string; labels: string[] }[] {
  const unquoted = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  return [...unquoted.matchAll(/\b(perpetua_\w+)\s*(?:\{([^}]*)\})?/g)].map((match) => ({
    metric: match[1]!,
    labels: [...(match[2] ?? '').matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((label) => label[1]!),
  }))
}

/** Label names of the expression's `by (…)` clauses: the labels its alerts are told apart by. */
const groupedBy = (expr: string) => [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((match) => match[1]!.split(',').map((label) => label.trim()))

describe('the alert rules (ops/prometheus)', () => {
  it('pass promtool check rules', async () => {
    const { code, output } = await promtool('check', 'rules', RULES)
    assert.equal(code, 0, output)
  })

  it('pass their promtool unit tests', async () => {
    const { code, output } = await promtool('test', 'rules', RULE_TESTS)
    assert.equal(code, 0, output)
  })

  it('are the issue’s ten alerts, each with a for:, a severity, a summary and a runbook section of the guide', () => {
    const sections = anchors(read(GUIDE))
    const all = rules()
    assert.deepEqual([...new Set(all.map((rule) => rule.alert))].sort(), [...ALERTS].sort())
    for (const rule of all) {
      const name = rule.alert ?? rule.record
      assert.match(rule.for ?? '', /^[1-9]\d*[smh]$/, `${name}: a for: duration`)
      assert.match(rule.labels?.severity ?? '', /^(page|ticket)$/, `${name}: labels.severity page or ticket`)
      assert.ok((rule.annotations?.summary ?? '').length > 40, `${name}: annotations.summary saying what to do`)
      const runbook = rule.annotations?.runbook ?? ''
      assert.equal(runbook, `${GUIDE}#${name?.toLowerCase()}`, `${name}: annotations.runbook links its section of the guide`)
      assert.ok(sections.has(runbook.split('#')[1]!), `${name}: ${GUIDE} has no heading "${name}"`)
    }
  })

  it('use only metrics and labels the recorded scrape has', () => {
    const families = scrapedFamilies(read(SCRAPE))
    assert.ok(families.size > 30, `${SCRAPE} holds only ${families.size} metric families: not a scrape`)
    const missing: string[] = []
    for (const rule of rules()) {
      const used = selectors(rule.expr)
      assert.ok(used.length > 0, `${rule.alert}: reads no perpetua_* metric`)
      for (const { metric, labels } of used) {
        const scraped = families.get(metric)
        if (!scraped) missing.push(`${rule.alert}: ${metric}`)
        else for (const label of labels) if (!scraped.has(label)) missing.push(`${rule.alert}: ${metric}{${label}}`)
      }
      for (const label of groupedBy(rule.expr)) {
        if (!used.some(({ metric }) => families.get(metric)?.has(label))) missing.push(`${rule.alert}: by (${label})`)
      }
    }
    assert.deepEqual(missing, [], `not in ${SCRAPE}: a metric or label was renamed, or the rule is wrong`)
  })

  it('each have a unit test where they fire, with their severity, and one where they stay quiet', () => {
    const tests = (parse(read(RULE_TESTS)) as { tests: RuleTest[] }).tests.flatMap((test) => test.alert_rule_test ?? [])
    for (const rule of rules()) {
      const own = tests.filter((test) => test.alertname === rule.alert)
      const fired = own.flatMap((test) => test.exp_alerts ?? []).some((alert) => alert.exp_labels?.severity === rule.labels?.severity)
      assert.ok(fired, `${rule.alert} (${rule.labels?.severity}): no test expects it to fire`)
      assert.ok(
        own.some((test) => (test.exp_alerts ?? []).length === 0),
        `${rule.alert}: no test expects it to stay quiet`,
      )
    }
  })
})
