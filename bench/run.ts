import { parseArgs } from 'node:util'
import { log } from './support/log.js'
import type { SuiteModule, SuiteOptions } from './support/suite.js'

/** Every suite, by the name given on the command line; each lives in bench/<name>.ts. */
const SUITES: Record<string, () => Promise<SuiteModule>> = {
  http: () => import('./http.js'),
  market: () => import('./market.js'),
  backtest: () => import('./backtest.js'),
  history: () => import('./history.js'),
  custom: () => import('./custom.js'),
  webhooks: () => import('./webhooks.js'),
  venue: () => import('./venue.js'),
  start: () => import('./start.js'),
  live: () => import('./live.js'),
  sweep: () => import('./sweep.js'),
  exits: () => import('./exits.js'),
  'exits-api': () => import('./exits-api.js'),
  'sweep-returns': () => import('./sweep-returns.js'),
  fairness: () => import('./fairness.js'),
}

const USAGE = `usage: npm run bench -- <suite> [options]

suites: ${Object.keys(SUITES).join(', ')}

  --duration S      seconds of measured load per target (default 10)
  --connections N   concurrent connections (default 50)
  --warmup S        unmeasured seconds per target before each measured run (default 2)
  --rounds N        rounds of each route against bare Fastify in the HTTP suites (default 3)
  --rate N          requests per second for each route and its ceiling in the HTTP suites (default 4000;
                    0: as fast as each answers)
  --cpu-prof        run the server under --cpu-prof and summarise each measured run

Prints one JSON object on stdout; progress goes to stderr. Exits 1 when a run saw errors or non-2xx.`

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
      rate: { type: 'string', default: '4000' },
      'cpu-prof': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  const name = positionals[0]
  const load = name !== undefined && Object.hasOwn(SUITES, name) ? SUITES[name] : undefined
  if (values.help || !load || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  const options: SuiteOptions = {
    durationS: positiveInteger('--duration', values.duration),
    connections: positiveInteger('--connections', values.connections),
    warmupS: positiveInteger('--warmup', values.warmup, 0),
    cpuProfile: values['cpu-prof'],
    rounds: positiveInteger('--rounds', values.rounds),
    rate: positiveInteger('--rate', values.rate, 0) || undefined,
  }
  const { report, failures } = await (await load()).run(options)
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  for (const failure of failures) log(`FAILED: ${failure}`)
  return failures.length === 0 ? 0 : 1
}

function positiveInteger(flag: string, raw: string, min = 1): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${flag} must be an integer of at least ${min} (got "${raw}")`)
  return value
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    log(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    process.exitCode = 1
  },
)
