import type { SweepStatistics } from './statistics/index.js'

const two = (x: number) => x.toFixed(2)
const percent = (x: number) => `${Math.round(x * 100)} %`
const count = (n: number) => n.toLocaleString('en-US')

/** One statistic said in words: which, its value (null when undefined) and the sentence. */
export interface StatisticSentence {
  name: 'pbo' | 'dsr' | 'psr' | 'prob_oos_loss' | 'degradation'
  value: number | null
  text: string
}

/** What a PBO says of the winner ("PBO 0.62: the winner is more likely overfit than not", issue 23). */
export function pboVerdict(pbo: number): string {
  if (pbo > 0.5) return 'the winner is more likely overfit than not'
  if (pbo > 0.2) return 'the winner often falls below the median out of sample: treat it with care'
  return 'the winner mostly stays above the median out of sample'
}

/** What a DSR says of the best Sharpe (0.95 is the papers' bar). */
export function dsrVerdict(dsr: number): string {
  if (dsr >= 0.95) return 'likely a real edge'
  if (dsr >= 0.5) return 'not conclusive'
  return 'the search, not skill, likely explains it'
}

/**
 * A sweep's overfitting statistics as sentences a trader reads without the papers, for every client
 * (the dashboard; the CLI's `sweep show` when it adopts it): the PBO first, then the DSR, the PSR, how
 * often the in-sample winner lost out of sample, and how its Sharpe carried over. A statistic the
 * module could not compute says why (its `reasons`). Pure: the dashboard bundles it.
 */
export function statisticsInWords(s: SweepStatistics): StatisticSentence[] {
  const why = (field: string) => s.reasons[field] ?? 'not computed'
  const pbo = s.pbo
  const sentences: StatisticSentence[] = []
  if (pbo.value === null) sentences.push({ name: 'pbo', value: null, text: `PBO not computed: ${why('pbo')}.` })
  else
    sentences.push({
      name: 'pbo',
      value: pbo.value,
      text: `PBO ${two(pbo.value)}: ${pboVerdict(pbo.value)}. In ${percent(pbo.value)} of ${count(pbo.combinations)} splits of the history, the configuration that won the in-sample half ranked at or below the median in the other half.`,
    })
  if (s.dsr === null) sentences.push({ name: 'dsr', value: null, text: `DSR not computed: ${why('dsr')}.` })
  else
    sentences.push({
      name: 'dsr',
      value: s.dsr,
      text: `DSR ${two(s.dsr)}: ${dsrVerdict(s.dsr)}. The probability that the best Sharpe beats the best a search of ${count(s.n_trials)} skill-less configurations would find by luck is ${percent(s.dsr)}.`,
    })
  if (s.psr === null) sentences.push({ name: 'psr', value: null, text: `PSR not computed: ${why('psr')}.` })
  else sentences.push({ name: 'psr', value: s.psr, text: `PSR ${two(s.psr)}: taken alone, as if it were the only configuration tried, the best run's Sharpe is above 0 with ${percent(s.psr)} probability.` })
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
