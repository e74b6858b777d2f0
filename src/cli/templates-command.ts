import { Command } from 'commander'
import type { CliContext } from './context.js'
import { NONE, printJson, table } from './output.js'

/** `perpetua templates`: what `--template` and `--param` accept. */
export function templatesCommand(context: CliContext): Command {
  return new Command('templates')
    .description('the strategy templates with their parameters and defaults (signed)')
    .option('--json', "print the API's answer exactly (with each parameter schema)")
    .action(async (options: { json?: boolean }, command: Command) => {
      const answer = await context.client(command, 'signed').get('/v1/templates')
      if (options.json) return printJson(context.output, answer)
      context.output.out(
        table(
          ['id', 'params (defaults)', 'symbols', 'min capital', 'description'],
          answer.data.map((t) => [
            t.id,
            Object.entries(t.defaults).map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(' ') || NONE,
            t.multi_symbol ? `${t.min_symbols}..${t.max_symbols ?? ''}` : '1',
            t.min_capital,
            t.description,
          ]),
          { 1: 36, 4: 60 },
        ),
      )
    })
}
