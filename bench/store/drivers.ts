// The job store's hot operations on each SQLite binding, same process, rounds interleaved so that a busy
// machine slows every driver alike: create N jobs, claim them (16 per claim, as the runner does), finish
// each, read each. Prints each driver's median µs per operation (CPU time of this process) and its ratio
// to the first driver's. The drivers are those this Node can use, or DRIVERS=node:sqlite,better-sqlite3.
// `node --import tsx bench/store/drivers.ts`; JOBS (default 2000), ROUNDS (default 7).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { webhookDelivery } from '../../src/jobs/embedded/dispatcher.js'
import { type DriverName, usableDrivers } from '../../src/jobs/embedded/sqlite-driver.js'
import { SqliteJobStore } from '../../src/jobs/embedded/sqlite-store.js'
import { commandLine, writeResult } from '../lib/results.js'
import { median } from '../lib/stats.js'

const JOBS = Number(process.env.JOBS ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 7)
const drivers = (process.env.DRIVERS?.split(',') as DriverName[] | undefined) ?? usableDrivers()
const OPERATIONS = ['create', 'claim', 'finish', 'read'] as const
type Operation = (typeof OPERATIONS)[number]

/** CPU µs per operation of each kind, over one round on a fresh store. */
async function round(driver: DriverName): Promise<Record<Operation, number>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-'))
  const store = SqliteJobStore.open({
    driver,
    dataDir,
    ttlMs: 60_000,
    maxPending: JOBS,
    makeDelivery: webhookDelivery,
  })
  const ids = Array.from({ length: JOBS }, (_, i) => `job${String(i).padStart(9, '0')}`)
  const timings = {} as Record<Operation, number>
  const timed = async (operation: Operation, work: () => Promise<void>) => {
    const start = process.cpuUsage()
    await work()
    const used = process.cpuUsage(start)
    timings[operation] = (used.user + used.system) / JOBS
  }
  const webhook = 'https://example.com/hook'
  await timed('create', async () => {
    for (const [i, id] of ids.entries()) {
      await store.submit({
        id,
        algorithm: 'PrimeChecker',
        version: '1.0.0',
        params: '{"number":7}',
        webhook: i % 2 ? webhook : null,
        cheap: true,
        createdAt: Date.now(),
      })
    }
  })
  const claimed: { id: string; runs: number }[] = []
  await timed('claim', async () => {
    for (;;) {
      const batch = await store.claim({ jobs: 16, heavy: 16 }, Date.now())
      if (batch.length === 0) break
      claimed.push(...batch)
    }
  })
  if (claimed.length !== JOBS) throw new Error(`claimed ${claimed.length} of ${JOBS}`)
  await timed('finish', async () => {
    for (const { id, runs } of claimed) {
      const outcome = { status: 'completed' as const, result: '{"is_prime":true}', metadata: '{}' }
      await store.finish({ id, run: runs, completedAt: Date.now(), outcome })
    }
  })
  await timed('read', async () => {
    for (const id of ids) if ((await store.read(id, Date.now()))?.status !== 'completed') throw new Error(id)
  })
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
  return timings
}

const results = new Map<DriverName, Record<Operation, number>[]>(drivers.map((d) => [d, []]))
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const driver of r % 2 ? [...drivers].reverse() : drivers) {
    const timings = await round(driver)
    if (r > 0) results.get(driver)?.push(timings) // round 0 warms up
  }
}

const caption = `${JOBS} jobs, ${ROUNDS} rounds; median CPU µs per operation`
console.log(`Node ${process.version}, ${caption}`)
const columns = ['driver', ...OPERATIONS]
console.log(`| ${columns.join(' | ')} |`)
console.log(`|---|${OPERATIONS.map(() => '---|').join('')}`)
const base = results.get(drivers[0] as DriverName) ?? []
const rows: string[][] = []
for (const [driver, rounds] of results) {
  const cells = OPERATIONS.map((op) => {
    const ours = median(rounds.map((t) => t[op]))
    const ratio = ours / median(base.map((t) => t[op]))
    return driver === drivers[0] ? ours.toFixed(1) : `${ours.toFixed(1)} (${ratio.toFixed(2)}×)`
  })
  rows.push([driver, ...cells])
  console.log(`| ${driver} | ${cells.join(' | ')} |`)
}
writeResult('drivers', {
  title: "the job store's SQLite drivers",
  script: 'bench/store/drivers.ts',
  history: 'docs/benchmarks/node-lines.md',
  command: commandLine(['JOBS', 'ROUNDS', 'DRIVERS'], 'node --import tsx bench/store/drivers.ts'),
  tables: [{ caption: `${caption}, ratios to ${drivers[0]}:`, columns, rows }],
  notes:
    drivers.length > 1
      ? []
      : [
          `Only ${drivers[0]} is usable on this Node: node:sqlite, to compare with, needs a Node that has it.`,
        ],
})
