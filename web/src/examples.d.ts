/** `example:NAME` is the text of examples/strategies/NAME.js, bundled by web/build.ts. */
declare module 'example:*' {
  const source: string
  export default source
}
