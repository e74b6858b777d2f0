/** A small backtest job on recorded data (sma_cross, BTCUSDT 1h, 2023 Q1): what tests of the job pipeline submit. */
export const SMA_CROSS_JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2023-01-01T00:00:00Z',
  end: '2023-03-31T23:00:00Z',
  capital: '10000',
}
