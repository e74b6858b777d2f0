import type { HeatCell } from './heat-cell.js'
import { useWidth } from './use-width.js'


const MARGIN = { left: 56, right: 8, top: 8, bottom: 40 }
const CHAR_PX = 6.5

/**
 * Two parameters against a value, as an SVG grid drawn at the container's width in real pixels:
 * `xs` across, `ys` up (the first at the bottom), each cell coloured from the lowest value (red) to the
 * highest (green), its value written inside when it fits. A click on a cell calls onPick with its id.
 * Every cell carries its labels and exact value in data-* attributes.
 */
export function Heatmap(props: {
  xs: string[]
  ys: string[]
  xName: string
  yName: string
  cells: HeatCell[]
  format: (value: number) => string
  selected?: string | undefined
  onPick?: (id: string) => void
  testId: string
  label: string
  /** What a blank cell means, said in the legend beside a blank swatch; none when no cell is blank. */
  blank?: string | null | undefined
}) {
  const { xs, ys, cells, format } = props
  const [ref, width] = useWidth<HTMLDivElement>()
  const values = cells.map((c) => c.value)
  const low = Math.min(...values)
  const high = Math.max(...values)
  const plotWidth = Math.max(0, width - MARGIN.left - MARGIN.right)
  const cellWidth = xs.length > 0 ? plotWidth / xs.length : 0
  const cellHeight = Math.min(32, Math.max(16, cellWidth * 0.6))
  const height = MARGIN.top + ys.length * cellHeight + MARGIN.bottom
  const xStep = Math.max(1, Math.ceil((Math.max(...xs.map((s) => s.length), 1) * CHAR_PX + 6) / Math.max(cellWidth, 1)))
  const yStep = Math.max(1, Math.ceil(14 / cellHeight))
  const showValues = cells.every((c) => format(c.value).length * CHAR_PX + 4 <= cellWidth) && cellHeight >= 16
  const top = (row: number) => MARGIN.top + (ys.length - 1 - row) * cellHeight
  return (
    <div ref={ref} class="svg-chart" data-testid={props.testId} data-cells={cells.length} role="img" aria-label={props.label}>
      {width > 0 ? (
        <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`}>
          {cells.map((cell) => (
            <g
              key={`${cell.x}:${cell.y}`}
              class={`cell${cell.id === props.selected ? ' selected' : ''}`}
              data-x={xs[cell.x]}
              data-y={ys[cell.y]}
              data-value={String(cell.value)}
              data-id={cell.id}
              onClick={() => props.onPick?.(cell.id)}
              // Reachable by keyboard too: Tab to a cell, Enter or Space picks it (lowercase: an SVG attribute).
              tabindex={props.onPick ? 0 : undefined}
              role={props.onPick ? 'button' : undefined}
              aria-label={`${props.xName} ${xs[cell.x]}, ${props.yName} ${ys[cell.y]}: ${format(cell.value)}`}
              onKeyDown={(event) => {
                if (event.key !== 'Enter' && event.key !== ' ') return
                event.preventDefault()
                props.onPick?.(cell.id)
              }}
            >
              <rect x={MARGIN.left + cell.x * cellWidth} y={top(cell.y)} width={Math.max(0, cellWidth - 1)} height={cellHeight - 1} fill={heatColor(cell.value, low, high)}>
                <title>
                  {props.xName} {xs[cell.x]}, {props.yName} {ys[cell.y]}: {format(cell.value)}
                </title>
              </rect>
              {showValues ? (
                <text x={MARGIN.left + (cell.x + 0.5) * cellWidth} y={top(cell.y) + cellHeight / 2 + 4} text-anchor="middle" class="cell-value">
                  {format(cell.value)}
                </text>
              ) : null}
            </g>
          ))}
          {xs.map((label, i) =>
            i % xStep === 0 ? (
              <text key={`x${i}`} x={MARGIN.left + (i + 0.5) * cellWidth} y={MARGIN.top + ys.length * cellHeight + 14} text-anchor="middle" class="axis">
                {label}
              </text>
            ) : null,
          )}
          {ys.map((label, i) =>
            i % yStep === 0 ? (
              <text key={`y${i}`} x={MARGIN.left - 6} y={top(i) + cellHeight / 2 + 4} text-anchor="end" class="axis">
                {label}
              </text>
            ) : null,
          )}
          <text x={MARGIN.left + plotWidth / 2} y={height - 6} text-anchor="middle" class="axis-name">
            {props.xName} →
          </text>
          <text x={10} y={MARGIN.top + (ys.length * cellHeight) / 2} text-anchor="middle" class="axis-name" transform={`rotate(-90 10 ${MARGIN.top + (ys.length * cellHeight) / 2})`}>
            {props.yName} →
          </text>
        </svg>
      ) : null}
      <p class="hint legend">
        <span class="swatch" style={{ background: heatColor(low, low, high) }} /> {format(low)} … <span class="swatch" style={{ background: heatColor(high, low, high) }} /> {format(high)}
      </p>
      {props.blank ? (
        <p class="hint legend" data-testid={`${props.testId}-blank`}>
          <span class="swatch blank" /> {props.blank}
        </p>
      ) : null}
    </div>
  )
}

/** Red (the lowest) through pale yellow to green (the highest). */
export function heatColor(value: number, low: number, high: number): string {
  const t = high > low ? (value - low) / (high - low) : 0.5
  const hue = 5 + t * 135
  return `hsl(${hue.toFixed(0)} 62% ${(58 - Math.abs(t - 0.5) * 14).toFixed(0)}%)`
}
