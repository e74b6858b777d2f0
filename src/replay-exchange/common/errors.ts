/** A Binance-style error: HTTP status plus the `{"code","msg"}` body Binance sends. */
export class BinanceError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'BinanceError'
  }
}

export const invalidSymbol = () => new BinanceError(400, -1121, 'Invalid symbol.')
export const mandatory = (name: string) =>
  new BinanceError(400, -1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`)
export const illegalCharacters = (name: string) =>
  new BinanceError(400, -1100, `Illegal characters found in parameter '${name}'; legal range is '^[0-9]{1,20}$'.`)
export const invalidData = (name: string) => new BinanceError(400, -1130, `Data sent for parameter '${name}' is not valid.`)
export const invalidInterval = () => new BinanceError(400, -1120, 'Invalid interval.')
export const startAfterEnd = () => new BinanceError(400, -1023, 'Start time is greater than end time.')
