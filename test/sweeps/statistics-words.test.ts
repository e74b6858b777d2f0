import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { SweepStatistics } from '../../src/sweeps/statistics/index.js'
import { statisticsInWords } from '../../src/sweeps/statistics-words.js'

describe('sweep statistics in words (src/sweeps/statistics-words.ts)', () => {
  it('says the PBO, DSR and PSR in words, and why a statistic is missing', () => {
    const base: SweepStatistics = {
      n_trials: 240,
      sharpe_variance: 0.001,
      expected_max_sharpe: 0.09,
      psr: 0.991,
      dsr: 0.42,
      pbo: { value: 0.62, combinations: 12870, logit_mean: -0.3, logit_median: -0.2, histogram: null, prob_oos_loss: 0.3, degradation_slope: -0.4, degradation_intercept: 0.01, blocks: 16, block_length: 125, dropped_rows: 0 },
      observations: 2000,
      best_sharpe: 0.1,
      best_skewness: 0,
      best_kurtosis: 3,
      reasons: {},
    }
    const words = statisticsInWords(base)
    assert.equal(words[0]!.name, 'pbo')
    assert.match(words[0]!.text, /^PBO 0\.62: the winner is more likely overfit than not\. In 62 % of 12,870 splits/)
    assert.match(words.find((w) => w.name === 'dsr')!.text, /^DSR 0\.42: the search, not skill, likely explains it\. .* 240 skill-less configurations .* is 42 %\.$/)
    assert.match(words.find((w) => w.name === 'psr')!.text, /^PSR 0\.99: .* 99 % probability/)
    assert.match(words.find((w) => w.name === 'degradation')!.text, /lower out-of-sample one/)
    assert.match(statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0.5 } })[0]!.text, /^PBO 0\.50: the winner often falls below the median out of sample: treat it with care\./)
    assert.match(statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0.2 } })[0]!.text, /^PBO 0\.20: the winner mostly stays above the median out of sample\./)
    assert.match(statisticsInWords({ ...base, dsr: 0.97 }).find((w) => w.name === 'dsr')!.text, /^DSR 0\.97: likely a real edge\./)
    assert.match(statisticsInWords({ ...base, dsr: 0.6 }).find((w) => w.name === 'dsr')!.text, /^DSR 0\.60: not conclusive\./)
    const missing = statisticsInWords({ ...base, dsr: null, pbo: { ...base.pbo, value: null }, reasons: { pbo: 'a sweep of one configuration has none to compare', dsr: 'too few days' } })
    assert.deepEqual(missing.slice(0, 2).map((w) => [w.name, w.value, w.text]), [
      ['pbo', null, 'PBO not computed: a sweep of one configuration has none to compare.'],
      ['dsr', null, 'DSR not computed: too few days.'],
    ])
  })
})
