import type { SweepStatistics } from '../../api/sweep-types.js'

const two = (x: number) => x.toFixed(2)
const percent = (x: number) => `${Math.round(x * 100)} %`
const count = (n: number) => n.toLocaleString('en-US')

/** One statistic said in words: what it is called, its value (null when undefined) and the sentence. */
export interface StatisticSentence {
  name: 'pbo' | 'dsr' | 'psr' | 'prob_oos_loss' | 'degradation'
  value: number | null
  text: string
}

/**
 * The sweep's overfitting statistics as sentences a trader reads without the papers: the PBO first
 * ("PBO 0.62: the winner is more likely overfit than not", issue 23), then the DSR, the PSR, how often
 * the in-sample winner lost out of sample, and how its Sharpe carried over. A statistic the server
 * could not compute says why (its `reasons`).
 */
export function statisticsInWords(s: SweepStatistics): StatisticSentence[] {
  const why = (field: string) => s.reasons?.[field] ?? 'not computed'
  const pbo = s.pbo
  const sentences: StatisticSentence[] = []
  if (pbo.value === null) sentences.push({ name: 'pbo', value: null, text: `PBO not computed: ${why('pbo')}.` })
  else {
    const verdict =
      pbo.value > 0.5 ? 'the winner is more likely overfit than not' : pbo.value === 0.5 ? 'the winner is as likely overfit as not' : pbo.value <= 0.1 ? 'little sign that the winner is overfit' : 'the winner is more likely real than overfit'
    sentences.push({
      name: 'pbo',
      value: pbo.value,
      text: `PBO ${two(pbo.value)}: ${verdict}. In ${percent(pbo.value)} of ${count(pbo.combinations)} splits of the history, the configuration that won the in-sample half ranked at or below the median in the other half.`,
    })
  }
  if (s.dsr === null) sentences.push({ name: 'dsr', value: null, text: `DSR not computed: ${why('dsr')}.` })
  else
    sentences.push({
      name: 'dsr',
      value: s.dsr,
      text: `DSR ${two(s.dsr)}: ${s.dsr >= 0.95 ? 'the best Sharpe holds up' : 'the best Sharpe does not hold up'} against the luck of ${count(s.n_trials)} trials: ${percent(s.dsr)} probability that it beats the best a skill-less search of that size would find${s.dsr >= 0.95 ? '' : ' (0.95 is the usual bar)'}.`,
    })
  if (s.psr === null) sentences.push({ name: 'psr', value: null, text: `PSR not computed: ${why('psr')}.` })
  else sentences.push({ name: 'psr', value: s.psr, text: `PSR ${two(s.psr)}: taken alone, as if it were the only configuration tried, the best run's Sharpe is above zero with ${percent(s.psr)} probability.` })
  if (pbo.prob_oos_loss !== null)
    sentences.push({ name: 'prob_oos_loss', value: pbo.prob_oos_loss, text: `In ${percent(pbo.prob_oos_loss)} of the splits the in-sample winner lost money out of sample (a negative Sharpe).` })
  if (pbo.degradation_slope !== null) {
    const slope = pbo.degradation_slope
    const text =
      slope < 0
        ? `Degradation slope ${two(slope)}: a higher in-sample Sharpe went with a lower out-of-sample one, a mark of overfitting.`
        : `Degradation slope ${two(slope)}: each unit of in-sample Sharpe carried ${two(slope)} of a unit out of sample.`
    sentences.push({ name: 'degradation', value: slope, text })
  }
  return sentences
}
