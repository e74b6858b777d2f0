import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { failedFiles, tapSummary } from '../../scripts/tap-summary.js'

/** What .ci/run prints of a run whose TAP went to a file (scripts/tap-summary.ts). */
const passing = `TAP version 13
# Subtest: a quick suite
    # Subtest: adds
    ok 1 - adds
      ---
      duration_ms: 1.5
      ...
    1..1
ok 1 - a quick suite
  ---
  duration_ms: 2500.2
  type: 'suite'
  ...
# Subtest: a slow suite
ok 2 - a slow suite
  ---
  duration_ms: 61000
  ...
`
const failing = `# Subtest: the store
    # Subtest: keeps what it wrote
    not ok 1 - keeps what it wrote
      ---
      duration_ms: 3.2
      location: '/ci/clone/test/db/store.test.ts:12:5'
      failureType: 'testCodeFailure'
      error: 'Expected values to be strictly equal'
      ...
    1..1
not ok 3 - the store
  ---
  duration_ms: 40
  location: '/ci/clone/test/db/store.test.ts:8:1'
  failureType: 'subtestsFailed'
  ...
`
const counts = (fail: number) => `1..3
# tests 4
# suites 2
# pass ${4 - fail}
# fail ${fail}
# cancelled 0
# skipped 0
# todo 0
# duration_ms 63512.4
`

describe('tapSummary', () => {
  it('counts a passing run and names its slowest suites, longest first, and nothing of the passing tests', () => {
    const summary = tapSummary(passing + counts(0), 'node 20')
    assert.match(summary, /^ci: node 20: 4 tests, 4 passed, 0 failed, 0 cancelled, 0 skipped, in 64 s$/m)
    assert.match(summary, /slowest suites:\n {2}61 s {2}a slow suite\n {2}3 s {2}a quick suite\n/)
    assert.doesNotMatch(summary, /adds/)
  })

  it("prints each failure with its report, the test's and its suite's", () => {
    const summary = tapSummary(passing + failing + counts(1), 'node 20')
    assert.match(summary, /4 tests, 3 passed, 1 failed/)
    assert.match(summary, / {4}not ok 1 - keeps what it wrote\n {6}---\n {6}duration_ms: 3.2\n {6}location: '\/ci\/clone\/test\/db\/store.test.ts:12:5'\n {6}failureType: 'testCodeFailure'\n {6}error: 'Expected values to be strictly equal'\n/)
    assert.match(summary, /^not ok 3 - the store\n {2}---/m)
  })

  it('names the files of the failures, once each, relative to the clone, for running them again', () => {
    const lateExit = `# Subtest: /ci/clone/test/live/late.test.ts\nnot ok 4 - /ci/clone/test/live/late.test.ts\n  ---\n  location: '/ci/clone/test/live/late.test.ts:1:1'\n  ...\n`
    assert.deepEqual(failedFiles(passing + failing + lateExit + counts(2), '/ci/clone'), ['test/db/store.test.ts', 'test/live/late.test.ts'])
    assert.deepEqual(failedFiles(passing + counts(0), '/ci/clone'), [])
  })

  it('names no files to run again when a failure has no location, or the run was cut', () => {
    const nowhere = `not ok 4 - somewhere\n  ---\n  error: 'lost'\n  ...\n`
    assert.equal(failedFiles(passing + failing + nowhere + counts(2), '/ci/clone'), undefined)
    assert.equal(failedFiles(passing + failing, '/ci/clone'), undefined)
  })

  it('shows the last lines of a run cut before its counts', () => {
    const summary = tapSummary(`${passing}# Subtest: the one that hung\n`, 'node 22')
    assert.match(summary, /^ci: node 22: the run ended before its counts; its last lines:\n/)
    assert.match(summary, /# Subtest: the one that hung/)
  })
})
