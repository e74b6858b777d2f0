import net from 'node:net'

/**
 * Which IP addresses a webhook may reach: a pure function of the address, so it is tested without
 * connecting anywhere. Only globally routable unicast addresses pass; every block below is refused
 * with the reason given. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are
 * judged by the IPv4 address they carry.
 */

interface Block {
  /** The network as bytes (4 for IPv4, 16 for IPv6) and its prefix length in bits. */
  network: Uint8Array
  prefix: number
  reason: string
}

const IPV4_BLOCKS: Block[] = [
  v4('0.0.0.0/8', 'an unspecified ("this network") address'),
  v4('10.0.0.0/8', 'a private address'),
  v4('100.64.0.0/10', 'a carrier-grade NAT (shared) address'),
  v4('127.0.0.0/8', 'a loopback address'),
  v4('169.254.0.0/16', 'a link-local address (this includes cloud metadata at 169.254.169.254)'),
  v4('172.16.0.0/12', 'a private address'),
  v4('192.0.0.0/24', 'an IETF protocol address'),
  v4('192.0.2.0/24', 'a documentation address'),
  v4('192.88.99.0/24', 'a 6to4 relay anycast address'),
  v4('192.168.0.0/16', 'a private address'),
  v4('198.18.0.0/15', 'a benchmarking address'),
  v4('198.51.100.0/24', 'a documentation address'),
  v4('203.0.113.0/24', 'a documentation address'),
  v4('224.0.0.0/4', 'a multicast address'),
  v4('240.0.0.0/4', 'a reserved or broadcast address'),
  // Public addresses that clouds answer as instance metadata or host services.
  v4('168.63.129.16/32', 'a cloud metadata address (Azure)'),
]

const IPV6_BLOCKS: Block[] = [
  v6('::/128', 'the unspecified address'),
  v6('::1/128', 'a loopback address'),
  v6('64:ff9b:1::/48', 'a local-use NAT64 address'),
  v6('100::/64', 'a discard-only address'),
  v6('2001::/32', 'a Teredo tunnel address'),
  v6('2001:db8::/32', 'a documentation address'),
  v6('2001:2::/48', 'a benchmarking address'),
  v6('3fff::/20', 'a documentation address'),
  v6('fc00::/7', 'a unique local (private) address'),
  v6('fe80::/10', 'a link-local address'),
  v6('fec0::/10', 'a site-local address'),
  v6('ff00::/8', 'a multicast address'),
]

/** Only 2000::/3 is allocated as global unicast; everything else in IPv6 is reserved. */
const IPV6_GLOBAL_UNICAST = v6('2000::/3', '')

/** IPv6 prefixes whose last (or 6to4: second) 32 bits are an IPv4 address that decides. */
const IPV4_CARRIERS: Array<{ block: Block; offset: number }> = [
  { block: v6('::ffff:0:0/96', 'IPv4-mapped'), offset: 12 },
  { block: v6('::/96', 'IPv4-compatible'), offset: 12 },
  { block: v6('64:ff9b::/96', 'NAT64'), offset: 12 },
  { block: v6('2002::/16', '6to4'), offset: 2 },
]

/** Why `address` may not be contacted, or undefined when it is a public unicast address. */
export function forbiddenAddressReason(address: string): string | undefined {
  const literal = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const version = net.isIP(literal)
  if (version === 4) return ipv4Reason(parseIpv4(literal))
  if (version === 6) return ipv6Reason(parseIpv6(literal))
  return `${JSON.stringify(address)} is not an IP address`
}

function ipv4Reason(bytes: Uint8Array): string | undefined {
  return IPV4_BLOCKS.find((block) => within(bytes, block))?.reason
}

function ipv6Reason(bytes: Uint8Array): string | undefined {
  const own = IPV6_BLOCKS.find((block) => within(bytes, block))
  if (own) return own.reason
  for (const { block, offset } of IPV4_CARRIERS) {
    if (!within(bytes, block)) continue
    const reason = ipv4Reason(bytes.subarray(offset, offset + 4))
    return reason && `${reason} in ${block.reason} form`
  }
  return within(bytes, IPV6_GLOBAL_UNICAST) ? undefined : 'a reserved IPv6 address'
}

function within(bytes: Uint8Array, block: Block): boolean {
  if (bytes.length !== block.network.length) return false
  const whole = block.prefix >> 3
  for (let i = 0; i < whole; i++) if (bytes[i] !== block.network[i]) return false
  const rest = block.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (bytes[whole]! & mask) === (block.network[whole]! & mask)
}

function parseIpv4(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number))
}

/** The 16 bytes of a valid IPv6 literal (net.isIP said so), including a trailing dotted IPv4. */
function parseIpv6(text: string): Uint8Array {
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((word) => word.toString(16)).join(':'),
  )
  const [head = '', rear] = hex.split('::')
  const words = (part: string) => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)))
  const front = words(head)
  const back = rear === undefined ? [] : words(rear)
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back]
  const bytes = new Uint8Array(16)
  all.forEach((word, i) => {
    bytes[2 * i] = word >> 8
    bytes[2 * i + 1] = word & 0xff
  })
  return bytes
}

function v4(cidr: string, reason: string): Block {
  const [address, prefix] = cidr.split('/')
  return { network: parseIpv4(address!), prefix: Number(prefix), reason }
}

function v6(cidr: string, reason: string): Block {
  const [address, prefix] = cidr.split('/')
  return { network: parseIpv6(address!), prefix: Number(prefix), reason }
}
