/**
 * User modules that misbehave, each with the code its job ends with: they pass the upload's smoke run
 * (2,000 bars) and misbehave from a job's 3,000th bar. `native` hangs in a builtin QuickJS's interrupt
 * never reaches, so it holds its engine thread until the watchdog ends it at the job's budget. That
 * budget is derived from the upload's measured cost (issue 34: 20 × µs per bar, at least 2 s): `native`
 * works hard on each of the smoke run's 2,000 bars (1,500 additions, 0.1–0.5 ms a bar here; a year of
 * 1h bars needs 62 µs for the cap), so its measured cost earns it the flat cap, 10 s + 100 µs per bar,
 * and its hang holds a thread that long, not just the 2 s floor a cheap module would get. `memory` works
 * as hard on those bars, for the same budget: filling 64 MiB takes a fraction of a second alone, but on a
 * loaded host (two worker processes, a sweep and the other hostile modules on 2 cores) it once took more
 * than a cheap module's 2 s floor and ended STRATEGY_TIMEOUT, which says nothing of the memory bound.
 */
export const HOSTILE_MODULES: Record<'loop' | 'native' | 'memory' | 'recursion', { source: string; code: string }> = {
  loop: { source: 'export function create() { let n = 0; return { onBar() { if (++n === 3000) for (;;) {} return NaN } } }', code: 'STRATEGY_TIMEOUT' },
  native: {
    source:
      'export function create() { let n = 0; let s = 0; return { onBar() { if (++n <= 2000) for (let i = 0; i < 1500; i++) s += i; else if (n === 3000) Array.prototype.indexOf.call({ length: 2 ** 31 }, 1); return NaN } } }',
    code: 'STRATEGY_TIMEOUT',
  },
  memory: {
    source:
      'export function create() { let n = 0; let s = 0; const kept = []; return { onBar() { if (++n <= 2000) for (let i = 0; i < 1500; i++) s += i; else if (n >= 3000) for (;;) kept.push(new Array(1e6).fill(n)); return NaN } } }',
    code: 'STRATEGY_OOM',
  },
  recursion: { source: 'export function create() { let n = 0; const deep = (k) => deep(k + 1) + 1; return { onBar() { if (++n === 3000) deep(0); return NaN } } }', code: 'STRATEGY_ERROR' },
}
