/** One cell of a heatmap (charts/heatmap.tsx), apart so code without a DOM can build cells. */
export interface HeatCell {
  /** Column and row, indexes into `xs` and `ys`. */
  x: number
  y: number
  value: number
  /** What the cell stands for (a run id): given back by onPick, and carried in data-id. */
  id: string
}
