import { statisticsBench } from './sweep-statistics.js'
import type { SuiteResult } from './support/suite.js'

/** Issue 23's sweep figures. The statistics part runs here; the sweep-run part (embedded and workers) joins it. */
export async function run(): Promise<SuiteResult> {
  const statistics = statisticsBench()
  return { report: { suite: 'sweep', ...statistics.report, node: process.version }, failures: statistics.failures }
}
