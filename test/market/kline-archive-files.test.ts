import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import { planKlineFiles } from '../../src/market/archive/archive-files.js'
import { KLINE_CSV_HEADER } from '../../src/binance-formats/kline-csv.js'
import { readZipEntry, writeZip, ZipError } from '../../src/binance-formats/zip.js'
import { ArchiveFormatError, parseKlineCsv } from '../../src/market/archive/kline-csv.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const JAN = Date.UTC(2023, 0, 1)
const row = (t: number, open = '16541.7') => `${t},${open},16600.0,16500.10,16550.5,1234.567,${t + HOUR - 1},20433123.1234,8123,600.5,9934000.0001,0`

describe('archive files: layout, CSV and zip', () => {
  it('plans whole months a week past, then whole days a day past, and leaves partial days and the last day or two to REST', () => {
    const now = Date.UTC(2025, 5, 17, 8, 38)
    const files = planKlineFiles('BTCUSDT', '1h', Date.UTC(2025, 2, 10, 5), now, now)
    const names = files.map((f) => f.path.split('/').pop())
    assert.equal(names[0], 'BTCUSDT-1h-2025-03-11.zip', 'the partial first day is left to REST')
    assert.equal(names.filter((n) => /-\d\d-\d\d\.zip$/.test(n!) && n!.includes('2025-03')).length, 21)
    assert.ok(names.includes('BTCUSDT-1h-2025-04.zip') && names.includes('BTCUSDT-1h-2025-05.zip'))
    assert.equal(names[names.length - 1], 'BTCUSDT-1h-2025-06-15.zip', 'June 16 is not a day past yet')
    assert.equal(files[0]!.path, 'data/futures/um/daily/klines/BTCUSDT/1h/BTCUSDT-1h-2025-03-11.zip')
    for (let i = 1; i < files.length; i++) assert.equal(files[i]!.from, files[i - 1]!.to, 'contiguous')
    // A month that ended less than a week ago comes as days.
    const early = planKlineFiles('BTCUSDT', '1h', Date.UTC(2025, 4, 1), Date.UTC(2025, 5, 3), Date.UTC(2025, 5, 3))
    assert.equal(early[0]!.path.split('/').pop(), 'BTCUSDT-1h-2025-05-01.zip')
  })

  it('reads files with and without the header row into the same bars', () => {
    const rows = [0, 1, 2].map((k) => row(JAN + k * HOUR))
    const bare = parseKlineCsv(Buffer.from(`${rows.join('\n')}\n`), HOUR, JAN, JAN + DAY)
    const headed = parseKlineCsv(Buffer.from(`${KLINE_CSV_HEADER}\r\n${rows.join('\r\n')}`), HOUR, JAN, JAN + DAY)
    assert.deepEqual(headed, bare)
    assert.deepEqual(Array.from(bare.openTime), [JAN, JAN + HOUR, JAN + 2 * HOUR])
    assert.equal(bare.open[0], 16541.7)
    assert.equal(bare.low[0], 16500.1)
    assert.equal(bare.quoteVolume[0], 20433123.1234)
    assert.equal(bare.trades[0], 8123)
  })

  it('reads every number exactly as Number() reads its text', () => {
    let seed = 7
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const texts: string[] = ['0', '0.0', '0.00000001', '-0.5', '123456789012345', '1234567890123456789', '99999.99999999999', '1e5', '0.1', '3.0000000000000004']
    for (let i = 0; i < 3000; i++) {
      const whole = String(Math.floor(random() * 10 ** Math.floor(random() * 12)))
      const fraction = String(Math.floor(random() * 10 ** 10)).slice(0, Math.floor(random() * 11))
      texts.push(fraction ? `${whole}.${fraction}` : whole)
    }
    const csv = texts.map((text, k) => `${JAN + k * 60_000},${text},${text},${text},${text},${text},0,${text},1,0,0,0`).join('\n')
    const bars = parseKlineCsv(Buffer.from(csv), 60_000, JAN, JAN + texts.length * 60_000)
    texts.forEach((text, k) => {
      assert.ok(Object.is(bars.open[k], Number(text)), `${text}: ${bars.open[k]} is not ${Number(text)}`)
      assert.ok(Object.is(bars.quoteVolume[k], Number(text)))
    })
  })

  it('refuses a malformed file whole', () => {
    const refuse = (csv: string, message: RegExp) => assert.throws(() => parseKlineCsv(Buffer.from(csv), HOUR, JAN, JAN + DAY), (e: Error) => e instanceof ArchiveFormatError && message.test(e.message))
    refuse(`${row(JAN)}\n${row(JAN + HOUR).replace(',16600.0', '')}`, /row 2: 11 fields/)
    refuse(`${row(JAN)},extra`, /more than 12 fields/)
    refuse(row(JAN, 'abc'), /field 2 is not a number/)
    refuse(row(JAN, ''), /field 2 is not a number/)
    refuse(`${row(JAN + HOUR)}\n${row(JAN)}`, /not after the previous/)
    refuse(row(JAN + 90_000), /not a bar of this file/)
    refuse(row(JAN + DAY), /not a bar of this file/)
    refuse(`open_time,open\n${row(JAN)}`, /unexpected header/)
  })

  it("writes zips that read back, and refuses a truncated, corrupt or foreign one", async () => {
    const csv = Buffer.from(`${row(JAN)}\n`)
    const zip = writeZip('BTCUSDT-1h-2023-01.csv', csv)
    assert.deepEqual(await readZipEntry(zip), { name: 'BTCUSDT-1h-2023-01.csv', data: csv })
    await assert.rejects(readZipEntry(zip.subarray(0, zip.length - 30)), ZipError)
    const corrupt = Buffer.from(zip)
    corrupt[30 + 22 + 3]! ^= 0xff // inside the deflated data (after the 30-byte header and the 22-byte name)
    await assert.rejects(readZipEntry(corrupt), ZipError)
    await assert.rejects(readZipEntry(zlib.gzipSync(csv)), ZipError)
  })
})
