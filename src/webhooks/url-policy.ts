import dns from 'node:dns/promises'
import net from 'node:net'
import { forbiddenAddressReason } from './address-policy.js'

const MAX_URL_LENGTH = 2048
const RESOLVE_TIMEOUT_MS = 5_000
/** How a refusal of a loopback or private host ends: the rule, and the server setting that lifts it for local development. */
const PUBLIC_ONLY =
  'webhooks must reach a public address (for a receiver on this machine or a private network, start the server with WEBHOOK_ALLOW_PRIVATE_HOSTS=true; never on a shared server)'

/**
 * Why a webhook URL is refused at create or update, or undefined when it is acceptable: https only,
 * no credentials, a port that can be connected to, and a host that is, or resolves only to, public addresses (every address is vetted,
 * so a name with one private record is refused). allowPrivateHosts (tests) skips the address checks.
 */
export async function vetWebhookUrl(raw: string, options: { allowPrivateHosts: boolean }): Promise<string | undefined> {
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'url is not a valid absolute URL'
  }
  if (url.protocol !== 'https:') return `url must start with https:// (got ${url.protocol}//)`
  if (url.username !== '' || url.password !== '') return 'url must not carry a user name or password'
  // The WHATWG parser accepts :0 (and :00), but no connection can be made to port 0.
  if (url.port === '0') return 'url port must be between 1 and 65535, not 0'
  if (options.allowPrivateHosts) return undefined
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (net.isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    return reason && `url host ${host} is ${reason}; ${PUBLIC_ONLY}`
  }
  const addresses = await resolveAll(host)
  if (typeof addresses === 'string') return addresses
  for (const address of addresses) {
    const reason = forbiddenAddressReason(address)
    if (reason) return `url host ${host} resolves to ${address}, ${reason}; ${PUBLIC_ONLY}`
  }
  return undefined
}

async function resolveAll(host: string): Promise<string[] | string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`url host ${host} did not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s`), RESOLVE_TIMEOUT_MS)
  })
  const lookup = dns.lookup(host, { all: true, verbatim: true }).then(
    (records) => (records.length > 0 ? records.map((record) => record.address) : `url host ${host} has no address`),
    () => `url host ${host} does not resolve`,
  )
  try {
    return await Promise.race([lookup, timeout])
  } finally {
    clearTimeout(timer)
  }
}
