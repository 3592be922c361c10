// How many CPUs this process may use, for the default number of worker threads: the cgroup's CPU quota
// where there is one (a container's or a pod's CPU limit), else the CPUs it may run on (its affinity
// mask), else the machine's cores. A pod on a 64-core node with a limit of 2 CPUs gets 2, not 64:
// threads beyond the quota only wait for it, and each holds its own memory.
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism, cpus as cores } from 'node:os'
import { dirname, join, relative } from 'node:path'

export type CpuSource = 'cgroup cpu quota' | 'cpu affinity' | 'cores'

export interface UsableCpus {
  cpus: number
  source: CpuSource
}

export interface CpuProbe {
  /** Where the cgroup file systems are mounted. */
  cgroupRoot?: string
  /** The file that names this process's cgroups. */
  selfCgroup?: string
}

/** Worker threads for `cpus` CPUs: one each but one, which stays with the event loop; at least one. */
export const threadsFor = (cpus: number): number => Math.max(1, cpus - 1)

export function usableCpus({
  cgroupRoot = '/sys/fs/cgroup',
  selfCgroup = '/proc/self/cgroup',
}: CpuProbe = {}): UsableCpus {
  const all = cores().length
  const affinity = Math.min(availableParallelism(), all)
  const quota = cgroupQuota(cgroupRoot, selfCgroup)
  // Rounded up, as a fraction of a CPU still runs a thread (a limit of 500m is one CPU, throttled).
  if (quota !== undefined && Math.ceil(quota) <= affinity) {
    return { cpus: Math.max(1, Math.ceil(quota)), source: 'cgroup cpu quota' }
  }
  return affinity < all ? { cpus: affinity, source: 'cpu affinity' } : { cpus: all, source: 'cores' }
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    return undefined
  }
}

/**
 * The smallest CPU quota, in CPUs, on the way from this process's cgroup up to the root of its
 * hierarchy (a parent's limit binds its children too); undefined when none is set or none can be read.
 */
function cgroupQuota(root: string, selfCgroup: string): number | undefined {
  const lines = (read(selfCgroup) ?? '').split('\n').map((line) => line.split(':'))
  // cgroup v2: one hierarchy, the line `0::/path`, the quota in cpu.max as "max 100000" or
  // "200000 100000" (microseconds of CPU time per period).
  const unified = lines.find(([id, controllers]) => id === '0' && controllers === '')
  if (unified !== undefined && read(join(root, 'cgroup.controllers')) !== undefined) {
    return smallest(root, unified.slice(2).join(':'), (dir) => {
      const [quota, period] = (read(join(dir, 'cpu.max')) ?? '').split(/\s+/)
      return perPeriod(quota, period)
    })
  }
  // cgroup v1: the line of the cpu controller (`4:cpu,cpuacct:/path`), mounted under its names;
  // cpu.cfs_quota_us is -1 when there is no quota.
  const cpu = lines.find(([, controllers]) => controllers?.split(',').includes('cpu'))
  if (cpu === undefined) return undefined
  const names = cpu[1] as string
  const mount = [join(root, names), join(root, 'cpu')].find(
    (dir) => read(join(dir, 'cpu.cfs_period_us')) !== undefined,
  )
  if (mount === undefined) return undefined
  return smallest(mount, cpu.slice(2).join(':'), (dir) =>
    perPeriod(read(join(dir, 'cpu.cfs_quota_us')), read(join(dir, 'cpu.cfs_period_us'))),
  )
}

/** CPUs from a quota and its period (both in microseconds); undefined for none ("max", -1). */
function perPeriod(quota: string | undefined, period: string | undefined): number | undefined {
  const q = Number(quota)
  const p = Number(period)
  if (quota === undefined || period === undefined || !(q > 0) || !(p > 0)) return undefined
  return q / p
}

/**
 * The smallest quota from `path` (as /proc/self/cgroup names it) up to `mount`. A path that is not
 * under the mount (a container that sees only its own cgroup, mounted as the root) starts at the mount.
 */
function smallest(mount: string, path: string, quotaOf: (dir: string) => number | undefined) {
  let dir = join(mount, path)
  if (relative(mount, dir).startsWith('..') || !existsSync(dir)) dir = mount
  let found: number | undefined
  for (;;) {
    const quota = quotaOf(dir)
    if (quota !== undefined && (found === undefined || quota < found)) found = quota
    if (relative(mount, dir) === '') return found
    dir = dirname(dir)
  }
}
