// Which webhook targets are allowed (docs/security.md): an absolute http(s) URL of at most 2048
// characters, and by default only public addresses. Literal addresses and localhost are refused when a
// job is created; names are checked when they are resolved, on the address actually connected to.
import { BlockList, isIP } from 'node:net'
import { InputRuleError } from '../errors.js'

const MAX_WEBHOOK_URL_LENGTH = 2048

// Two lists: a BlockList checks IPv4 addresses against its IPv6 rules too (as ::ffff:a.b.c.d), which
// `::/3` below would match.
const NON_PUBLIC_V4 = new BlockList()
const NON_PUBLIC_V6 = new BlockList()
// IANA's IPv4 special-purpose registry: this network, private, carrier-grade NAT, loopback, link-local,
// protocol assignments, documentation, 6to4 relay, benchmarking, multicast, reserved and broadcast.
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  NON_PUBLIC_V4.addSubnet(network, prefix, 'ipv4')
}
// IPv6: everything outside global unicast (2000::/3), which holds unspecified, loopback, IPv4-mapped,
// NAT64, unique-local, link-local and multicast; and inside it the IETF protocol, documentation and 6to4
// ranges, whose addresses may lead anywhere.
for (const [network, prefix] of [
  ['::', 3],
  ['4000::', 2],
  ['8000::', 1],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
] as const) {
  NON_PUBLIC_V6.addSubnet(network, prefix, 'ipv6')
}

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i

/** Whether an IP address is a public one. Not an address at all counts as not public. */
export function isPublicAddress(address: string): boolean {
  const mapped = MAPPED_IPV4.exec(address)
  if (mapped !== null) return isPublicAddress(mapped[1] as string)
  const family = isIP(address)
  if (family === 0) return false
  return family === 4 ? !NON_PUBLIC_V4.check(address, 'ipv4') : !NON_PUBLIC_V6.check(address, 'ipv6')
}

/** The host of a URL as an address or a name: no IPv6 brackets, no trailing dot, lower case. */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase()
}

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost')

/** Checks a job's webhook URL at creation; throws 400 VALIDATION_ERROR on the field `webhook`. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string {
  const refuse = (why: string) => new InputRuleError(`Invalid webhook URL: ${why}.`, 'webhook', raw)
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw refuse(`longer than ${MAX_WEBHOOK_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw refuse('not an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('the scheme must be http or https')
  if (allowPrivate) return url.href
  const host = hostOf(url)
  if (isLocalhostName(host) || (isIP(host) !== 0 && !isPublicAddress(host))) {
    throw refuse(
      'it targets a loopback, private or otherwise non-public address; ' +
        'set ALGOSERVE_WEBHOOK_ALLOW_PRIVATE=true to allow such targets',
    )
  }
  return url.href
}
