/** The sweep API's shapes (issue 23), as the typed client generates them from the routes (src/sweeps/schemas.ts). */
export type { Sweep, SweepRequest as SweepCreate, SweepReturns as ReturnsMatrix, SweepRun } from '../../../src/client/index.js'
import type { Sweep, SweepRequest } from '../../../src/client/index.js'

export type Objective = NonNullable<SweepRequest['objective']>
export type RandomSpace = NonNullable<SweepRequest['random']>
export type SweepResult = NonNullable<Sweep['result']>
export type WalkForwardResult = NonNullable<SweepResult['walk_forward']>
export type SweepStatistics = SweepResult['statistics']
