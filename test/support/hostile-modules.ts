/**
 * User modules that misbehave, each with the code its job ends with: they pass the upload's smoke run
 * (2,000 bars) and misbehave from a job's 3,000th bar. `native` hangs in a builtin QuickJS's interrupt
 * never reaches, so it holds its engine thread until the watchdog ends it at the job's budget.
 */
export const HOSTILE_MODULES: Record<'loop' | 'native' | 'memory' | 'recursion', { source: string; code: string }> = {
  loop: { source: 'export function create() { let n = 0; return { onBar() { if (++n === 3000) for (;;) {} return NaN } } }', code: 'STRATEGY_TIMEOUT' },
  native: {
    source: 'export function create() { let n = 0; return { onBar() { if (++n === 3000) Array.prototype.indexOf.call({ length: 2 ** 31 }, 1); return NaN } } }',
    code: 'STRATEGY_TIMEOUT',
  },
  memory: { source: 'export function create() { let n = 0; const kept = []; return { onBar() { if (++n >= 3000) for (;;) kept.push(new Array(1e6).fill(n)); return NaN } } }', code: 'STRATEGY_OOM' },
  recursion: { source: 'export function create() { let n = 0; const deep = (k) => deep(k + 1) + 1; return { onBar() { if (++n === 3000) deep(0); return NaN } } }', code: 'STRATEGY_ERROR' },
}
