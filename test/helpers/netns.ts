// A network namespace of its own for a process a test cuts off: joined to this host by a veth pair on
// a /24 of 10.x.y.0 (the host end .1, the namespace's end .2, and .3 a second address of the host end),
// so a test can drop the namespace's traffic to one host address (a blackhole route) and keep the rest.
// Needs root and `ip` (iproute2); where they are missing the tests that need it are skipped.
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' })

function probe(): string | false {
  const name = `asprobe${randomBytes(3).toString('hex')}`
  const added = spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8', timeout: 5000 })
  if (added.error !== undefined || added.status !== 0) {
    return `network namespaces unavailable (ip netns add: ${added.error?.message ?? added.stderr.trim()}): partition tests skipped`
  }
  spawnSync('ip', ['netns', 'delete', name], { timeout: 5000 })
  return false
}

/** For `describe` options: the visible reason the partition tests are skipped, or false. */
export const skipWithoutNetns: string | false = probe()

export interface Netns {
  name: string
  /** The host end's address (bind what the namespace must reach, and may be cut from, here). */
  host: string
  /** A second address of the host end, never cut. */
  otherHost: string
  /** `ip netns exec NAME`: put before a command to run it in the namespace. */
  exec: string[]
  /** Drops the namespace's traffic to `address` (a blackhole route), until heal. */
  cut(address: string): void
  heal(address: string): void
  close(): void
}

export function createNetns(): Netns {
  const id = randomBytes(3).toString('hex')
  const name = `algoserve-${id}`
  const [outside, inside] = [`as${id}h`, `as${id}n`]
  const net = `10.${randomInt(200, 250)}.${randomInt(1, 254)}`
  const inNs = (...args: string[]) => ip('netns', 'exec', name, 'ip', ...args)
  ip('netns', 'add', name)
  try {
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside)
    ip('link', 'set', inside, 'netns', name)
    ip('addr', 'add', `${net}.1/24`, 'dev', outside)
    ip('addr', 'add', `${net}.3/32`, 'dev', outside)
    ip('link', 'set', outside, 'up')
    inNs('addr', 'add', `${net}.2/24`, 'dev', inside)
    inNs('link', 'set', inside, 'up')
    inNs('link', 'set', 'lo', 'up')
  } catch (error) {
    spawnSync('ip', ['link', 'delete', outside])
    spawnSync('ip', ['netns', 'delete', name])
    throw error
  }
  return {
    name,
    host: `${net}.1`,
    otherHost: `${net}.3`,
    exec: ['ip', 'netns', 'exec', name],
    cut: (address) => inNs('route', 'add', 'blackhole', `${address}/32`),
    heal: (address) => {
      inNs('route', 'del', 'blackhole', `${address}/32`)
      // The connections the cut left half-open end now, as TCP's retransmissions would end them in
      // time (after tens of seconds of backing off): their processes reconnect at once.
      ip('netns', 'exec', name, 'ss', '-K', 'dst', address)
    },
    close: () => {
      // Deleting one end of a veth pair deletes both.
      spawnSync('ip', ['link', 'delete', outside])
      spawnSync('ip', ['netns', 'delete', name])
    },
  }
}
