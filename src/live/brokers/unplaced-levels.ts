import { StrategyError } from '../../custom-templates/sandbox/strategy-error.js'

/**
 * A live run's module stated a protective level (stop_price or take_profit_price). Live runs place no
 * protective orders until issue 31 puts them on the exchange, and whether a module states levels is known only
 * from its answers (a deploy cannot refuse it as it refuses `exits`): the run fails here, at the first level,
 * rather than trade a position its author believes protected. A price (> 0) is a level; NaN (keep) and 0
 * (remove) are not. Nothing NaN-fills a live run's levels, so a level once stated stays seen.
 */
export function refuseUnplacedLevels(levels: Float64Array | undefined): void {
  if (levels === undefined) return
  for (let k = 0; k < levels.length; k++) {
    if (levels[k]! > 0) {
      throw new StrategyError(
        'STRATEGY_ERROR',
        'the module stated a protective level (stop_price or take_profit_price): live runs place no protective orders yet, so the run stops rather than trade unprotected; dry-run it, or return numbers only',
      )
    }
  }
}
