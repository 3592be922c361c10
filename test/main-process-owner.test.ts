// Nothing started for a process algorithm outlives its Algoserve process: not a program that ignores
// its stdin's end and SIGTERM and spins, not a grandchild in a session of its own. A SIGKILL of the
// service leaves them to its watchdog; when the watchdog is gone too, the next service started on the
// same data directory ends them. Processes are found by their marker in /proc/<pid>/environ.
import assert from 'node:assert/strict'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDataDir } from './helpers/app.js'
import { listening, start } from './helpers/child.js'
import { alive, markedProcesses, NO_PROC, processWithVariable } from './helpers/marked-processes.js'
import { sleep, until } from './helpers/time.js'

const FIXTURES = fileURLToPath(new URL('fixtures/misbehaving', import.meta.url))
const ALGORITHMS = ['setsid-grandchild', 'deaf-to-stdin'].map((name) => join(FIXTURES, name)).join(',')

/** A service on `dataDir` with the two fixtures, its token, and its marked processes once all are up. */
async function serveWithPrograms(dataDir: string) {
  const service = start(['serve', '--data-dir', dataDir, '--port', '0', '--algorithms', ALGORITHMS])
  await listening(service)
  const token = await until(
    () => readdirSync(join(dataDir, 'process-owners')).find((file) => /^[0-9a-f]{32}$/.test(file)),
    10_000,
    'the token recorded',
  )
  // Each program and its child, each in a session of its own: four.
  const processes = await until(
    () => {
      const found = markedProcesses((marker) => marker.startsWith(`${token}.`))
      return found.length === 4 && new Set(found.map((process) => process.session)).size === 4 && found
    },
    20_000,
    'four marked processes in four sessions',
  )
  return { service, token, pids: processes.map((process) => process.pid) }
}

test('a SIGKILL of the service: its watchdog ends every process it started, wherever they went', {
  skip: NO_PROC,
  timeout: 60_000,
}, async (t) => {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const { service, pids } = await serveWithPrograms(dataDir)
  service.process.kill('SIGKILL')
  await service.exit
  await until(
    () => pids.every((pid) => !alive(pid)),
    5000,
    () => `left: ${pids.filter(alive)}`,
  )
})

test('with its watchdog gone too, the next service on the same data directory ends them', {
  skip: NO_PROC,
  timeout: 60_000,
}, async (t) => {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const first = await serveWithPrograms(dataDir)
  // Should the test fail half-way, what it left running is ended here.
  t.after(() => {
    for (const pid of first.pids.filter(alive)) process.kill(pid, 'SIGKILL')
  })
  const watchdog = processWithVariable(`ALGOSERVE_WATCHDOG=${first.token}`)
  assert.ok(watchdog !== undefined, 'the watchdog runs')
  process.kill(watchdog, 'SIGKILL')
  first.service.process.kill('SIGKILL')
  await first.service.exit
  await sleep(1000)
  // The program that exits at its stdin's end is gone; the spinning one and both children are not.
  const left = first.pids.filter(alive)
  assert.equal(left.length, 3, 'left behind with nothing to end them')
  const second = start(['serve', '--data-dir', dataDir, '--port', '0', '--algorithms', ALGORITHMS])
  t.after(() => second.process.kill('SIGKILL'))
  await listening(second)
  await until(
    () => left.every((pid) => !alive(pid)),
    5000,
    () => `left: ${left.filter(alive)}`,
  )
  assert.ok(!readdirSync(join(dataDir, 'process-owners')).includes(first.token), 'its record removed')
  second.process.kill('SIGTERM')
  assert.equal(await second.exit, 0)
  assert.deepEqual(readdirSync(join(dataDir, 'process-owners')), [], 'a clean shutdown leaves no record')
})
