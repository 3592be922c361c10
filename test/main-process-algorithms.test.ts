// Process algorithms with `algoserve serve` as operators run it: their processes start with the service,
// a SIGTERM stops them with it, and a SIGKILL of the service leaves none behind (each exits when its
// stdin closes, as the protocol says), idle or in the middle of a call.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { listening, serveFresh } from './helpers/child.js'
import { until } from './helpers/time.js'

const ECHO = fileURLToPath(new URL('../examples/algorithms/echo-bash', import.meta.url))
const MISBEHAVING = fileURLToPath(new URL('fixtures/misbehaving/on-demand-js', import.meta.url))
const NO_PROC = process.platform !== 'linux' && 'the processes are read from /proc (Linux only)'

/** The algorithm processes whose parent is `pid` (tsx starts a process of its own too). */
function algorithmProcessesOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (ppid === pid && /echo\.sh|process\.mjs/.test(command)) children.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return children
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function startWithProcesses(t: Parameters<typeof serveFresh>[0]) {
  const service = serveFresh(t, ['--algorithms', `${ECHO},${MISBEHAVING}`])
  const url = await listening(service)
  const pid = service.process.pid as number
  // Echo keeps two, Misbehaving one.
  const processes = await until(
    () => {
      const found = algorithmProcessesOf(pid)
      return found.length === 3 && found
    },
    20_000,
    'three algorithm processes',
  )
  return { service, url, processes }
}

test('a SIGKILL of the service leaves no algorithm process behind, idle or mid-call', {
  skip: NO_PROC,
}, async (t) => {
  const { service, url, processes } = await startWithProcesses(t)
  // Misbehaving in the middle of a call it will never answer.
  const job = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"algorithm": "Misbehaving", "params": {"mode": "hang"}}',
  })
  assert.equal(job.status, 202)
  const { job_id } = (await job.json()) as { job_id: string }
  await until(
    async () =>
      ((await (await fetch(`${url}/jobs/${job_id}`)).json()) as { status: string }).status === 'running',
    10_000,
    'the job running',
  )
  service.process.kill('SIGKILL')
  await service.exit
  await until(
    () => processes.every((pid) => !alive(pid)),
    10_000,
    () => `gone: ${processes.filter(alive)}`,
  )
})

test('a SIGTERM stops the algorithm processes with the service', { skip: NO_PROC }, async (t) => {
  const { service, processes } = await startWithProcesses(t)
  service.process.kill('SIGTERM')
  assert.equal(await service.exit, 0)
  for (const pid of processes) assert.equal(alive(pid), false, `process ${pid} left behind`)
})
