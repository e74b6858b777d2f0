import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { forbiddenAddressReason } from '../../src/webhooks/address-policy.js'
import { vetWebhookUrl } from '../../src/webhooks/url-policy.js'

const REFUSED: Array<[string, RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['10.0.0.1', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /link-local.*metadata/],
  ['169.254.170.2', /link-local/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.100.100.200', /carrier-grade NAT/],
  ['168.63.129.16', /metadata/],
  ['0.0.0.0', /unspecified/],
  ['224.0.0.251', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['192.0.2.10', /documentation/],
  ['::1', /loopback/],
  ['::', /unspecified/],
  ['[::1]', /loopback/],
  ['::ffff:127.0.0.1', /loopback.*IPv4-mapped/],
  ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
  ['::ffff:169.254.169.254', /link-local.*IPv4-mapped/],
  ['::ffff:10.0.0.1', /private.*IPv4-mapped/],
  ['::127.0.0.1', /loopback.*IPv4-compatible/],
  ['64:ff9b::a9fe:a9fe', /link-local.*NAT64/],
  ['2002:c0a8:0101::1', /private.*6to4/],
  ['fe80::1', /link-local/],
  ['fe80::1%eth0', /link-local/],
  ['fd00:ec2::254', /unique local/],
  ['fc00::1', /unique local/],
  ['ff02::1', /multicast/],
  ['2001:db8::1', /documentation/],
  ['1::', /reserved/],
]

const ALLOWED = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808']

describe('webhook address policy (pure)', () => {
  for (const [address, reason] of REFUSED) {
    it(`refuses ${address}`, () => {
      assert.match(forbiddenAddressReason(address) ?? 'allowed', reason)
    })
  }
  it('allows public unicast addresses in both families', () => {
    for (const address of ALLOWED) assert.equal(forbiddenAddressReason(address), undefined, address)
  })
  it('treats a name as no address at all', () => {
    assert.match(forbiddenAddressReason('localhost') ?? '', /not an IP address/)
  })
})

describe('webhook URL policy', () => {
  const strict = { allowPrivateHosts: false }
  const cases: Array<[string, RegExp]> = [
    ['http://example.com/hook', /must start with https/],
    ['ftp://example.com/', /must start with https/],
    ['not a url', /not a valid absolute URL/],
    ['https://user:pw@example.com/', /user name or password/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://2130706433/hook', /127\.0\.0\.1 is a loopback/], // the URL parser turns the number into 127.0.0.1
    ['https://0x7f.1/hook', /loopback/],
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:169.254.169.254]/latest/meta-data', /link-local/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
    ['https://10.1.2.3:8443/hook', /private/],
    ['https://localhost/hook', /resolves to .*loopback/], // resolved through the hosts file, never the network
    [`https://example.com/${'a'.repeat(2100)}`, /at most 2048/],
    ['https://example.com:0/hook', /port must be between 1 and 65535/], // the URL parser accepts it
    ['https://8.8.8.8:00/hook', /port must be between 1 and 65535/],
    ['https://example.com:65536/hook', /not a valid absolute URL/],
  ]
  for (const [url, problem] of cases) {
    it(`refuses ${url.slice(0, 60)}`, async () => {
      assert.match((await vetWebhookUrl(url, strict)) ?? 'accepted', problem)
    })
  }
  it('accepts a public address literal without any lookup', async () => {
    assert.equal(await vetWebhookUrl('https://8.8.8.8/hook', strict), undefined)
  })
  it('lets tests reach loopback receivers with allowPrivateHosts, but still only over https', async () => {
    assert.equal(await vetWebhookUrl('https://127.0.0.1:9443/hook', { allowPrivateHosts: true }), undefined)
    assert.match((await vetWebhookUrl('http://127.0.0.1:9443/hook', { allowPrivateHosts: true })) ?? '', /https/)
    assert.match((await vetWebhookUrl('https://127.0.0.1:0/hook', { allowPrivateHosts: true })) ?? '', /port/)
  })
})
