import type { SweepStatistics } from './statistics/index.js'

/**
 * Below this many configurations the PBO and the DSR are shown but given no verdict (docs/decisions/sweeps.md,
 * "Statistics that know their limits"): both compare the configurations with each other, and a handful of
 * them makes the PBO's ranks coarse (with 6 the winner's rank takes 6 values) and V, the Sharpe variance
 * the DSR deflates by, an estimate from a few points.
 */
export const INFORMATIVE_CONFIGURATIONS = 16

const count = (n: number) => n.toLocaleString('en-US')

/**
 * A probability with `digits` decimals that never rounds a value strictly inside (0, 1) to 0 or 1:
 * one more decimal first, then "above 0.999" / "below 0.001" (issue 35: 0.9995 is not 1.00).
 */
export function probability(p: number, digits = 2): string {
  return bounded(p, digits, 1, '')
}

/** A probability as a percentage, whole unless it would round to 0 % or 100 %: 0.9995 is "above 99.9 %", 0.0004 "below 0.1 %". */
export function probabilityPercent(p: number): string {
  return `${bounded(p * 100, 0, 100, ' %')}`
}

function bounded(x: number, digits: number, top: number, unit: string): string {
  if (x <= 0 || x >= top) return `${x.toFixed(digits)}${unit}`
  const text = x.toFixed(digits)
  if (Number(text) !== 0 && Number(text) !== top) return `${text}${unit}`
  // One more decimal, unless that too would round to the bound; the 1e-9 keeps 0.9995 (99.94999… in float) "above".
  const last = digits + 1
  const step = 10 ** -last
  if (x >= top - step / 2 - 1e-9) return `above ${(top - step).toFixed(last)}${unit}`
  if (x < step / 2 + 1e-9) return `below ${step.toFixed(last)}${unit}`
  return `${x.toFixed(last)}${unit}`
}

/** A share after "In": "In under 0.1 % of the splits", not "In below 0.1 %". */
const share = (p: number) => probabilityPercent(p).replace(/^below /, 'under ').replace(/^above /, 'over ')

/** A value at the start of a sentence ("PBO 0.62", "PBO above 0.999"). */
const said = (name: string, p: number) => `${name} ${probability(p)}`

/** One statistic said in words: which, its value (null when undefined) and the sentence. */
export interface StatisticSentence {
  name: 'few' | 'pbo' | 'dsr' | 'psr' | 'prob_oos_loss' | 'degradation' | 'edge'
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

/** The search the statistics came from: the grid and the best run's params, for the edge-of-grid sentence. */
export interface SweepSearch {
  grid?: Record<string, readonly unknown[]> | undefined
  bestParams?: Record<string, unknown> | undefined
}

/**
 * A sweep's overfitting statistics as sentences a trader reads without the papers, for every client
 * (the dashboard's sweep page, the CLI's `sweep show`): below INFORMATIVE_CONFIGURATIONS a first
 * sentence says the PBO and DSR mean little and no verdict follows; then the PBO, the DSR, the PSR,
 * how often the in-sample winner lost out of sample, how its Sharpe carried over, and whether the
 * best run sits on the grid's edge. A statistic the module could not compute says why (its `reasons`).
 * No sentence contradicts another: the degradation slope is read beside the PBO, not against it.
 * Pure: the dashboard bundles it.
 */
export function statisticsInWords(s: SweepStatistics, search: SweepSearch = {}): StatisticSentence[] {
  const why = (field: string) => s.reasons[field] ?? 'not computed'
  const pbo = s.pbo
  const informative = s.n_trials >= INFORMATIVE_CONFIGURATIONS
  const sentences: StatisticSentence[] = []
  if (!informative)
    sentences.push({
      name: 'few',
      value: s.n_trials,
      text: `Only ${count(s.n_trials)} configuration${s.n_trials === 1 ? '' : 's'}: the PBO and the DSR compare configurations with each other and say little below ${INFORMATIVE_CONFIGURATIONS}, so read the numbers below as they are, not as a verdict on the winner; sweep ${INFORMATIVE_CONFIGURATIONS} or more to judge it.`,
    })
  const verdict = (text: string) => (informative ? `: ${text}. ` : '. ')
  if (pbo.value === null) sentences.push({ name: 'pbo', value: null, text: `PBO not computed: ${why('pbo')}.` })
  else
    sentences.push({
      name: 'pbo',
      value: pbo.value,
      text: `${said('PBO', pbo.value)}${verdict(pboVerdict(pbo.value))}In ${share(pbo.value)} of ${count(pbo.combinations)} splits of the history, the configuration that won the in-sample half ranked at or below the median in the other half.`,
    })
  if (s.dsr === null) sentences.push({ name: 'dsr', value: null, text: `DSR not computed: ${why('dsr')}.` })
  else {
    // A DSR above the bar beside a PBO above one half is no contradiction, but read alone the two verdicts seem one.
    const reconcile = informative && s.dsr >= 0.95 && pbo.value !== null && pbo.value > 0.5 ? ', though as the PBO says, which configuration wins does not hold up out of sample' : ''
    sentences.push({
      name: 'dsr',
      value: s.dsr,
      text: `${said('DSR', s.dsr)}${informative ? `: ${dsrVerdict(s.dsr)}${reconcile}. ` : '. '}The probability that the best Sharpe beats the best a search of ${count(s.n_trials)} skill-less configurations would find by luck is ${probabilityPercent(s.dsr)}.`,
    })
  }
  if (s.psr === null) sentences.push({ name: 'psr', value: null, text: `PSR not computed: ${why('psr')}.` })
  else sentences.push({ name: 'psr', value: s.psr, text: `${said('PSR', s.psr)}: taken alone, as if it were the only configuration tried, the best run's Sharpe is above 0 with ${probabilityPercent(s.psr)} probability.` })
  if (pbo.prob_oos_loss !== null)
    sentences.push({ name: 'prob_oos_loss', value: pbo.prob_oos_loss, text: `In ${share(pbo.prob_oos_loss)} of the splits the in-sample winner lost money out of sample (a negative Sharpe).` })
  if (pbo.degradation_slope !== null) sentences.push({ name: 'degradation', value: pbo.degradation_slope, text: degradationWords(pbo.degradation_slope, informative ? pbo.value : null) })
  const edge = edgeOfGrid(search)
  if (edge) sentences.push({ name: 'edge', value: null, text: edge })
  return sentences
}

/**
 * The degradation slope read beside the PBO (`pbo` null: no verdict). A negative slope alone was called
 * "a mark of overfitting" beside "PBO 0.00: the winner mostly stays above the median" (issue 35): a
 * falling slope with a low PBO says the winner's Sharpe shrinks out of sample while it still ranks well.
 */
function degradationWords(slope: number, pbo: number | null): string {
  const head = `Degradation slope ${slope.toFixed(2)}`
  if (slope >= 0) return `${head}: each unit of in-sample Sharpe carried ${slope.toFixed(2)} of a unit out of sample.`
  const fell = `${head}: a higher in-sample Sharpe went with a lower out-of-sample one`
  if (pbo === null) return `${fell}.`
  if (pbo > 0.5) return `${fell}, a mark of overfitting, as the PBO says.`
  if (pbo > 0.2) return `${fell}: expect less out of sample, as the PBO warns.`
  return `${fell}: expect the winner's Sharpe to shrink out of sample, though it mostly still ranked above the median (the PBO).`
}

/**
 * "fast = 50 is the grid's largest value: widen the grid": each swept number whose best value is its
 * grid's smallest or largest, when the grid has at least three values of it (with two, every value is an
 * edge). Random search is not judged: its draws rarely land on a bound.
 */
export function edgeOfGrid({ grid, bestParams }: SweepSearch): string | null {
  if (!grid || !bestParams) return null
  const found: string[] = []
  for (const [name, values] of Object.entries(grid)) {
    // Numbers and the exits' decimal strings; a switch (true/false) has no edge to widen.
    if (!values.every((v) => (typeof v === 'number' || typeof v === 'string') && Number.isFinite(Number(v)))) continue
    const numbers = [...new Set(values.map(Number))]
    if (numbers.length < 3) continue
    const best = Number(bestParams[name])
    if (!Number.isFinite(best)) continue
    const [low, high] = [Math.min(...numbers), Math.max(...numbers)]
    if (best === high) found.push(`${name} = ${String(bestParams[name])} is the grid's largest value`)
    else if (best === low) found.push(`${name} = ${String(bestParams[name])} is the grid's smallest value`)
  }
  if (found.length === 0) return null
  return `The best run sits on the edge of the grid: ${found.join('; ')}. Widen the grid past it: a better configuration may lie beyond.`
}

/**
 * SR₀ and the Sharpe variance in plain words, for where their numbers are shown (issue 35: a trader read
 * "SR₀ (per day) 0.0412" and "Var of Sharpe 0.000113" with nothing to say what they are). `n` the trials.
 */
export function luckBarWords(n: number): { expected_max_sharpe: string; sharpe_variance: string } {
  return {
    expected_max_sharpe: `SR₀ is the luck bar: the best daily Sharpe that ${count(n)} configurations with no edge at all would be expected to reach by chance alone. The DSR asks how surely the best run's daily Sharpe stands above it.`,
    sharpe_variance: `Var of Sharpe is how far the configurations' daily Sharpes spread from each other: the wider they spread, the higher a search of them reaches by luck, so the higher SR₀.`,
  }
}

/** What walk-forward efficiency is, for wherever it is shown. */
export const WALK_FORWARD_EFFICIENCY =
  "Walk-forward efficiency is the out-of-sample days' CAGR (each window traded by the configuration that won its in-sample days, stitched together) divided by the average in-sample CAGR of those winners: 1 means they kept earning at the pace they showed in sample, near 0 or below that the pace did not carry over."

/** A walk-forward's efficiency read: "0.53: the out-of-sample days earned at 53 % of the in-sample pace", or why it is undefined. */
export function efficiencyWords(efficiency: number | null, reason?: string): string {
  if (efficiency === null) return `undefined${reason ? ` (${reason})` : ''}`
  if (efficiency < 0) return `${efficiency.toFixed(2)}: the out-of-sample days lost money while the in-sample winners had earned`
  return `${efficiency.toFixed(2)}: the out-of-sample days earned at ${Math.round(efficiency * 100)} % of the in-sample pace`
}
