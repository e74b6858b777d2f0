/** Unix seconds, as the chart library's UTCTimestamp (no DOM here: node tests import it). */
export const seconds = (value: string | number): number => Math.floor(new Date(value).getTime() / 1000)
