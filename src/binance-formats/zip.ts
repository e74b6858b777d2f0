import { promisify } from 'node:util'
import zlib from 'node:zlib'

/**
 * The one-file zips of Binance's public data archive, read and written with node:zlib alone. An archive
 * file holds one CSV, stored with method 8 (deflate); a reader of one entry needs the end-of-central-
 * directory record, the entry's local header and inflateRaw: ~60 lines, where the maintained packages
 * (yauzl, fflate, adm-zip) bring streaming, ZIP64 or many entries we never meet (docs/decisions/backtests.md, "History from the archive (issue 25)").
 */

const LOCAL_HEADER = 0x04034b50
const CENTRAL_HEADER = 0x02014b50
const END_OF_CENTRAL = 0x06054b50
const DEFLATE = 8
const STORED = 0
const inflateRaw = promisify(zlib.inflateRaw) as (data: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>
/** The largest output buffer asked for at once (a declared size is the file's word, checked only after). */
const MAX_CHUNK = 64 * 1024 * 1024

/** Why a file is not a zip we read: the archive's span is then fetched over REST. */
export class ZipError extends Error {
  override name = 'ZipError'
}

/**
 * The first entry of a zip: its name and inflated bytes, checked against the CRC-32 and size it declares.
 * Inflated on libuv's thread pool, so the files downloading together inflate side by side.
 */
export async function readZipEntry(zip: Buffer): Promise<{ name: string; data: Buffer }> {
  // The end record is the last 22 bytes unless a comment follows it (up to 65,535 bytes).
  let end = -1
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL) {
      end = i
      break
    }
  }
  if (end < 0) throw new ZipError('no end-of-central-directory record (truncated or not a zip)')
  const entries = zip.readUInt16LE(end + 10)
  const centralAt = zip.readUInt32LE(end + 16)
  if (entries < 1) throw new ZipError('the zip holds no file')
  if (centralAt + 46 > end || zip.readUInt32LE(centralAt) !== CENTRAL_HEADER) throw new ZipError('the central directory is not where the end record says')
  const flags = zip.readUInt16LE(centralAt + 8)
  const method = zip.readUInt16LE(centralAt + 10)
  const crc = zip.readUInt32LE(centralAt + 16)
  const compressedSize = zip.readUInt32LE(centralAt + 20)
  const size = zip.readUInt32LE(centralAt + 24)
  const nameLength = zip.readUInt16LE(centralAt + 28)
  const localAt = zip.readUInt32LE(centralAt + 42)
  const name = zip.toString('utf8', centralAt + 46, centralAt + 46 + nameLength)
  if (flags & 1) throw new ZipError(`${name} is encrypted`)
  if (compressedSize === 0xffffffff || size === 0xffffffff || localAt === 0xffffffff) throw new ZipError(`${name} needs ZIP64, which archive files never do`)
  if (localAt + 30 > centralAt || zip.readUInt32LE(localAt) !== LOCAL_HEADER) throw new ZipError(`no local header for ${name}`)
  const dataAt = localAt + 30 + zip.readUInt16LE(localAt + 26) + zip.readUInt16LE(localAt + 28)
  if (dataAt + compressedSize > centralAt) throw new ZipError(`${name} runs past the central directory`)
  const packed = zip.subarray(dataAt, dataAt + compressedSize)
  let data: Buffer
  if (method === DEFLATE) {
    try {
      // One output buffer of the declared size: at the default 16 kB, a month's CSV came back in ~60 pieces,
      // each a trip from the thread pool to the main thread and a copy there.
      data = await inflateRaw(packed, { chunkSize: Math.min(Math.max(size, 64 * 1024), MAX_CHUNK) })
    } catch (error) {
      throw new ZipError(`${name} does not inflate: ${(error as Error).message}`)
    }
  } else if (method === STORED) data = Buffer.from(packed)
  else throw new ZipError(`${name} uses compression method ${method}; only deflate and stored are read`)
  if (data.length !== size) throw new ZipError(`${name} inflates to ${data.length} bytes, not the ${size} declared`)
  if (zlib.crc32(data) >>> 0 !== crc) throw new ZipError(`${name} fails its CRC-32`)
  return { name, data }
}

/** A zip of one deflated file (what the replay exchange's archive serves). */
export function writeZip(name: string, data: Buffer): Buffer {
  // Level 1: a month of 5m klines deflates in 26 ms instead of 70–100 ms at level 6, 10% larger (426 kB vs 387 kB).
  const packed = zlib.deflateRawSync(data, { level: 1 })
  const fileName = Buffer.from(name, 'utf8')
  const crc = zlib.crc32(data) >>> 0
  // Version 2.0, no flags, deflate, DOS time and date of 1980-01-01 00:00 (a fixed stamp: the same bytes every time).
  const common = (header: Buffer, at: number) => {
    header.writeUInt16LE(20, at)
    header.writeUInt16LE(0, at + 2)
    header.writeUInt16LE(DEFLATE, at + 4)
    header.writeUInt16LE(0, at + 6)
    header.writeUInt16LE(0x21, at + 8)
    header.writeUInt32LE(crc, at + 10)
    header.writeUInt32LE(packed.length, at + 14)
    header.writeUInt32LE(data.length, at + 18)
    header.writeUInt16LE(fileName.length, at + 22)
  }
  const local = Buffer.alloc(30)
  local.writeUInt32LE(LOCAL_HEADER, 0)
  common(local, 4)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(CENTRAL_HEADER, 0)
  central.writeUInt16LE(20, 4)
  common(central, 6)
  central.writeUInt32LE(0, 42) // the local header is at offset 0
  const centralAt = local.length + fileName.length + packed.length
  const end = Buffer.alloc(22)
  end.writeUInt32LE(END_OF_CENTRAL, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + fileName.length, 12)
  end.writeUInt32LE(centralAt, 16)
  return Buffer.concat([local, fileName, packed, central, fileName, end])
}
