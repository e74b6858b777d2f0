import { useWidth } from './use-width.js'

const MARGIN = { left: 36, right: 8, top: 18, bottom: 34 }
const HEIGHT = 200

/**
 * The CSCV logits λ as a histogram (`edges`: bins' bounds, one more than `counts`), with the line at
 * λ = 0: bars left of it are splits whose in-sample winner ranked at or below the out-of-sample
 * median, and their share is the PBO. Drawn in SVG at the container's width.
 */
export function LogitHistogram({ edges, counts, pbo, testId }: { edges: number[]; counts: number[]; pbo: number | null; testId: string }) {
  const [ref, width] = useWidth<HTMLDivElement>()
  const lo = edges[0] ?? -1
  const hi = edges.at(-1) ?? 1
  const most = Math.max(1, ...counts)
  const plotWidth = Math.max(0, width - MARGIN.left - MARGIN.right)
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom
  const x = (value: number) => MARGIN.left + ((value - lo) / (hi - lo || 1)) * plotWidth
  const y = (n: number) => MARGIN.top + plotHeight - (n / most) * plotHeight
  const zero = x(Math.min(hi, Math.max(lo, 0)))
  return (
    <div ref={ref} class="svg-chart" data-testid={testId} data-edges={edges.join(',')} data-counts={counts.join(',')} role="img" aria-label="Histogram of the logits of the in-sample winners' out-of-sample ranks, with the PBO line at 0">
      {width > 0 ? (
        <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`}>
          {counts.map((n, i) => {
            const left = x(edges[i]!)
            const right = x(edges[i + 1]!)
            const centre = (edges[i]! + edges[i + 1]!) / 2
            return (
              <rect key={i} class={centre <= 0 ? 'bar overfit' : 'bar'} data-count={n} x={left + 0.5} y={y(n)} width={Math.max(0, right - left - 1)} height={MARGIN.top + plotHeight - y(n)}>
                <title>
                  λ in ({edges[i]!.toFixed(2)}, {edges[i + 1]!.toFixed(2)}]: {n} splits
                </title>
              </rect>
            )
          })}
          <line x1={MARGIN.left} x2={MARGIN.left + plotWidth} y1={MARGIN.top + plotHeight} y2={MARGIN.top + plotHeight} class="axis-line" />
          <line x1={zero} x2={zero} y1={MARGIN.top - 12} y2={MARGIN.top + plotHeight} class="pbo-line" data-testid="pbo-line" />
          <text x={zero - 4} y={MARGIN.top - 4} text-anchor="end" class="axis-name">
            {pbo === null ? 'λ ≤ 0' : `PBO ${pbo.toFixed(2)} ←`}
          </text>
          <text x={zero + 4} y={MARGIN.top - 4} class="axis-name">
            → winner held up
          </text>
          <text x={MARGIN.left - 6} y={MARGIN.top + 8} text-anchor="end" class="axis">
            {most}
          </text>
          <text x={MARGIN.left - 6} y={MARGIN.top + plotHeight} text-anchor="end" class="axis">
            0
          </text>
          {[lo, 0, hi].map((tick) => (
            <text key={tick} x={x(tick)} y={MARGIN.top + plotHeight + 14} text-anchor={tick === lo ? 'start' : tick === hi ? 'end' : 'middle'} class="axis">
              {tick.toFixed(1)}
            </text>
          ))}
          <text x={MARGIN.left + plotWidth / 2} y={HEIGHT - 4} text-anchor="middle" class="axis-name">
            logit λ of the in-sample winner's out-of-sample rank
          </text>
        </svg>
      ) : null}
    </div>
  )
}
