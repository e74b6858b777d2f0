import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { SweepStatistics } from '../../src/sweeps/statistics/index.js'
import { efficiencyWords, INFORMATIVE_CONFIGURATIONS, luckBarWords, probability, probabilityPercent, statisticsInWords, WALK_FORWARD_EFFICIENCY } from '../../src/sweeps/statistics-words.js'

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

describe('sweep statistics in words (src/sweeps/statistics-words.ts)', () => {
  it('says the PBO, DSR and PSR in words, and why a statistic is missing', () => {
    const words = statisticsInWords(base)
    assert.equal(words[0]!.name, 'pbo')
    assert.match(words[0]!.text, /^PBO 0\.62: the winner is more likely overfit than not\. In 62 % of 12,870 splits/)
    assert.match(words.find((w) => w.name === 'dsr')!.text, /^DSR 0\.42: the search, not skill, likely explains it\. .* 240 skill-less configurations .* is 42 %\.$/)
    assert.match(words.find((w) => w.name === 'psr')!.text, /^PSR 0\.99: .* 99 % probability/)
    assert.match(words.find((w) => w.name === 'degradation')!.text, /lower out-of-sample one/)
    assert.match(statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0.5 } })[0]!.text, /^PBO 0\.50: the winner often falls below the median out of sample: treat it with care\./)
    assert.match(statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0.2 } })[0]!.text, /^PBO 0\.20: the winner mostly stays above the median out of sample\./)
    assert.match(statisticsInWords({ ...base, dsr: 0.97 }).find((w) => w.name === 'dsr')!.text, /^DSR 0\.97: likely a real edge/)
    assert.match(statisticsInWords({ ...base, dsr: 0.6 }).find((w) => w.name === 'dsr')!.text, /^DSR 0\.60: not conclusive\./)
    const missing = statisticsInWords({ ...base, dsr: null, pbo: { ...base.pbo, value: null }, reasons: { pbo: 'a sweep of one configuration has none to compare', dsr: 'too few days' } })
    assert.deepEqual(missing.slice(0, 2).map((w) => [w.name, w.value, w.text]), [
      ['pbo', null, 'PBO not computed: a sweep of one configuration has none to compare.'],
      ['dsr', null, 'DSR not computed: too few days.'],
    ])
  })

  it('says a sweep of fewer than 16 configurations gives the PBO and DSR no verdict, and still shows them', () => {
    assert.equal(INFORMATIVE_CONFIGURATIONS, 16)
    const few = statisticsInWords({ ...base, n_trials: 6, dsr: 0.42, pbo: { ...base.pbo, value: 0, degradation_slope: -0.4 } })
    assert.deepEqual(few.map((w) => w.name), ['few', 'pbo', 'dsr', 'psr', 'prob_oos_loss', 'degradation'])
    assert.match(few[0]!.text, /^Only 6 configurations: the PBO and the DSR .* say little below 16, .* not as a verdict/)
    assert.equal(few[0]!.value, 6)
    assert.match(few[1]!.text, /^PBO 0\.00\. In 0 % of 12,870 splits/)
    assert.equal(few[1]!.value, 0)
    assert.match(few[2]!.text, /^DSR 0\.42\. The probability .* is 42 %\.$/)
    const text = few.map((w) => w.text).join(' ')
    for (const verdict of ['overfit', 'median out of sample', 'real edge', 'not conclusive', 'skill, likely', 'mark of overfitting', 'treat it with care'])
      assert.ok(!text.includes(verdict), `"${verdict}" in: ${text}`)
    // One configuration: the singular, and 16 gets the verdicts back.
    assert.match(statisticsInWords({ ...base, n_trials: 1 })[0]!.text, /^Only 1 configuration: /)
    const sixteen = statisticsInWords({ ...base, n_trials: 16 })
    assert.equal(sixteen[0]!.name, 'pbo')
    assert.match(sixteen[0]!.text, /^PBO 0\.62: the winner is more likely overfit than not\./)
  })

  it('never rounds a probability inside (0, 1) to 1.00, 100 %, 0.00 or 0 %', () => {
    const high = statisticsInWords({ ...base, psr: 0.9995, dsr: 0.9995, pbo: { ...base.pbo, value: 0.0004, prob_oos_loss: 0.0004 } })
    const text = high.map((w) => w.text).join(' ')
    assert.match(high.find((w) => w.name === 'psr')!.text, /^PSR above 0\.999: .* above 99\.9 % probability\.$/)
    assert.match(high.find((w) => w.name === 'dsr')!.text, /^DSR above 0\.999: likely a real edge\. .* is above 99\.9 %\.$/)
    assert.match(high.find((w) => w.name === 'pbo')!.text, /^PBO below 0\.001: the winner mostly stays above the median out of sample\. In under 0\.1 % of /)
    assert.match(high.find((w) => w.name === 'prob_oos_loss')!.text, /^In under 0\.1 % of the splits/)
    assert.ok(!/1\.00|100 %|0\.00\b|\b0 %/.test(text), text)
    assert.equal(high.find((w) => w.name === 'dsr')!.value, 0.9995, 'the value itself is not rounded')
    assert.deepEqual([0.999, 0.996, 0.004, 0.62, 0, 1].map((p) => probabilityPercent(p)), ['99.9 %', '99.6 %', '0.4 %', '62 %', '0 %', '100 %'])
    assert.deepEqual([0.999, 0.9995, 0.0004, 0.994, 0, 1].map((p) => probability(p)), ['0.999', 'above 0.999', 'below 0.001', '0.99', '0.00', '1.00'])
    assert.equal(probability(0.9995, 3), '0.9995')
  })

  it('says when the best run sits on the edge of the grid, in any swept number', () => {
    const grid = { fast: [5, 10, 20, 50], slow: [20, 60, 100], allow_short: [true, false], 'exits.stop_loss': ['0.01', '0.02', '0.03'] }
    const edge = (bestParams: Record<string, unknown>) => statisticsInWords(base, { grid, bestParams }).find((w) => w.name === 'edge')?.text
    assert.equal(
      edge({ fast: 50, slow: 60, allow_short: true, 'exits.stop_loss': '0.02' }),
      "The best run sits on the edge of the grid: fast = 50 is the grid's largest value. Widen the grid past it: a better configuration may lie beyond.",
    )
    assert.equal(
      edge({ fast: 10, slow: 20, allow_short: false, 'exits.stop_loss': '0.03' }),
      "The best run sits on the edge of the grid: slow = 20 is the grid's smallest value; exits.stop_loss = 0.03 is the grid's largest value. Widen the grid past it: a better configuration may lie beyond.",
    )
    assert.equal(edge({ fast: 10, slow: 60, allow_short: true, 'exits.stop_loss': '0.02' }), undefined, 'inside the grid; a switch has no edge')
    assert.equal(statisticsInWords(base, { grid: { fast: [5, 50] }, bestParams: { fast: 50 } }).find((w) => w.name === 'edge'), undefined, 'two values: every value is an edge')
    assert.equal(statisticsInWords(base, { bestParams: { fast: 50 } }).find((w) => w.name === 'edge'), undefined, 'random search: no grid')
  })

  it('never says a mark of overfitting beside a PBO that says the winner holds', () => {
    const low = statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0, degradation_slope: -0.4 } })
    const degradation = low.find((w) => w.name === 'degradation')!.text
    assert.ok(!degradation.includes('overfitting'), degradation)
    assert.match(degradation, /^Degradation slope -0\.40: a higher in-sample Sharpe went with a lower out-of-sample one: expect the winner's Sharpe to shrink out of sample, though it mostly still ranked above the median/)
    assert.match(statisticsInWords(base).find((w) => w.name === 'degradation')!.text, /a mark of overfitting, as the PBO says\.$/)
    assert.match(statisticsInWords({ ...base, pbo: { ...base.pbo, value: 0.3 } }).find((w) => w.name === 'degradation')!.text, /expect less out of sample, as the PBO warns\.$/)
    // A DSR above the bar beside a PBO above one half says how both hold.
    assert.match(statisticsInWords({ ...base, dsr: 0.97 }).find((w) => w.name === 'dsr')!.text, /^DSR 0\.97: likely a real edge, though as the PBO says, which configuration wins does not hold up out of sample\./)
  })

  it('says what SR₀ and the Sharpe variance are, and reads a walk-forward efficiency (issue 35)', () => {
    const words = luckBarWords(1240)
    assert.match(words.expected_max_sharpe, /^SR₀ is the luck bar: the best daily Sharpe that 1,240 configurations with no edge at all would be expected to reach by chance alone\./)
    assert.match(words.sharpe_variance, /^Var of Sharpe is how far the configurations' daily Sharpes spread/)
    assert.match(WALK_FORWARD_EFFICIENCY, /^Walk-forward efficiency is the out-of-sample days' CAGR .* divided by the average in-sample CAGR of those winners: 1 means/)
    assert.equal(efficiencyWords(0.534), '0.53: the out-of-sample days earned at 53 % of the in-sample pace')
    assert.equal(efficiencyWords(-0.2), '-0.20: the out-of-sample days lost money while the in-sample winners had earned')
    assert.equal(efficiencyWords(null, 'the mean in-sample CAGR is ≤ 0: efficiency is undefined'), 'undefined (the mean in-sample CAGR is ≤ 0: efficiency is undefined)')
  })
})
