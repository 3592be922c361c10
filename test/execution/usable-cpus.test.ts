// The CPUs the process may use, read from cgroup file trees laid out as Linux lays them (v2 and v1, a
// container's view and a host's, nested limits), written to a temporary directory; the affinity mask
// from a real child process pinned with taskset; and the thread count the executor derives from them.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Executor } from '../../src/execution/executor.js'
import { threadsFor, usableCpus } from '../../src/execution/usable-cpus.js'
import { createMetrics } from '../../src/metrics/metrics.js'

const CORES = cpus().length
const trees: string[] = []
after(() => {
  for (const dir of trees) rmSync(dir, { recursive: true, force: true })
})

/** A fake root with these files (paths relative to it): /proc/self/cgroup and the cgroup mount. */
function tree(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-cgroup-'))
  trees.push(dir)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), `${content}\n`)
  }
  return { cgroupRoot: join(dir, 'sys/fs/cgroup'), selfCgroup: join(dir, 'proc/self/cgroup') }
}

// The machine's own CPUs, as the probe reads them without a quota (no taskset here).
const unlimited = { cpus: CORES, source: 'cores' }

test('cgroup v2 in a container: the quota of cpu.max, rounded up to whole CPUs', () => {
  const v2 = (cpuMax: string) =>
    usableCpus(
      tree({
        'proc/self/cgroup': '0::/',
        'sys/fs/cgroup/cgroup.controllers': 'cpuset cpu io memory pids',
        'sys/fs/cgroup/cpu.max': cpuMax,
      }),
    )
  assert.deepEqual(v2('100000 100000'), { cpus: 1, source: 'cgroup cpu quota' })
  // 500m, as Kubernetes writes a limit of half a CPU: one CPU, throttled.
  assert.deepEqual(v2('50000 100000'), { cpus: 1, source: 'cgroup cpu quota' })
  assert.deepEqual(v2('max 100000'), unlimited)
  // A quota above the CPUs there are: the CPUs.
  assert.deepEqual(v2(`${(CORES + 8) * 100000} 100000`), unlimited)
})

test("cgroup v2 seen from the host: the process's own cgroup and the smallest quota above it", () => {
  const paths = tree({
    'proc/self/cgroup': '0::/kubepods.slice/pod-a.slice/container-b.scope',
    'sys/fs/cgroup/cgroup.controllers': 'cpuset cpu io memory pids',
    'sys/fs/cgroup/cpu.max': 'max 100000',
    'sys/fs/cgroup/kubepods.slice/cpu.max': 'max 100000',
    'sys/fs/cgroup/kubepods.slice/pod-a.slice/cpu.max': '100000 100000',
    'sys/fs/cgroup/kubepods.slice/pod-a.slice/container-b.scope/cpu.max': 'max 100000',
  })
  assert.deepEqual(usableCpus(paths), { cpus: 1, source: 'cgroup cpu quota' })
})

test('cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us; -1 is no quota', () => {
  const v1 = (quota: string, path = '/') =>
    usableCpus(
      tree({
        'proc/self/cgroup': `5:memory:${path}\n4:cpu,cpuacct:${path}\n0::/`,
        'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': quota,
        'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000',
      }),
    )
  assert.deepEqual(v1('100000'), { cpus: 1, source: 'cgroup cpu quota' })
  assert.deepEqual(v1('-1'), unlimited)
  // A container without its own cgroup namespace names its host path, which its mount does not
  // have: the mount's root is its cgroup.
  assert.deepEqual(v1('100000', '/docker/0123abcd'), { cpus: 1, source: 'cgroup cpu quota' })
})

test('no cgroup files at all: the cores', () => {
  assert.deepEqual(usableCpus(tree({})), unlimited)
})

test('a process pinned to one CPU (taskset) has one, from its affinity mask', async (t) => {
  if (CORES < 2 || !existsSync('/usr/bin/taskset')) {
    t.skip('needs two cores and taskset')
    return
  }
  const module = fileURLToPath(new URL('../../src/execution/usable-cpus.ts', import.meta.url))
  const empty = tree({})
  const script = `import(${JSON.stringify(module)}).then((m) => console.log(JSON.stringify(m.usableCpus(${JSON.stringify(empty)}))))`
  const { stdout } = await promisify(execFile)('/usr/bin/taskset', [
    '-c',
    '0',
    process.execPath,
    '--import',
    'tsx',
    '-e',
    script,
  ])
  assert.deepEqual(JSON.parse(stdout), { cpus: 1, source: 'cpu affinity' })
})

test('the executor: one thread per usable CPU but one, at least one; or the threads it is given', async () => {
  assert.deepEqual([1, 2, 3, 4, 64].map(threadsFor), [1, 1, 2, 3, 63])
  const quota = tree({
    'proc/self/cgroup': '0::/',
    'sys/fs/cgroup/cgroup.controllers': 'cpu',
    'sys/fs/cgroup/cpu.max': '100000 100000',
  })
  const byQuota = new Executor({ threads: 0, cpuProbe: quota }, createMetrics())
  const given = new Executor({ threads: 3, cpuProbe: quota }, createMetrics())
  try {
    assert.equal(byQuota.threads, 1)
    assert.deepEqual(byQuota.usableCpus, { cpus: 1, source: 'cgroup cpu quota' })
    assert.equal(given.threads, 3)
    assert.equal(given.usableCpus, null)
  } finally {
    await Promise.all([byQuota.close(), given.close()])
  }
})
