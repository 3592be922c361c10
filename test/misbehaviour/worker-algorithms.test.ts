// `algoserve worker` with ALGOSERVE_WORKER_ALGORITHMS naming one program algorithm of two loaded: only
// that one's program runs in it, and its /readyz depends on that program alone. The other program
// (test/fixtures/misbehaving/dies-at-start-js) exits at every start.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listening, start } from '../helpers/child.js'
import { fixture, NOT_LINUX, programProcesses } from '../helpers/misbehaviour.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { sleep } from '../helpers/time.js'

const STRAY = fixture('stray-answers-js')
const DIES = fixture('dies-at-start-js')
/** Longer than the service's first wait (1 s) before it starts again a program that failed to start. */
const WATCH_MS = 2500

let redis: RedisServer | undefined
before(async () => {
  if (!skipWithoutRedis) redis = await startRedis()
})
after(() => redis?.close())

test('a worker runs the programs of the algorithms it takes, and is ready on theirs alone', {
  skip: skipWithoutRedis || NOT_LINUX,
}, async (t) => {
  const worker = (only: string) => {
    const child = start(['worker', '--worker-port', '0', '--algorithms', `${STRAY},${DIES}`], {
      ALGOSERVE_REDIS_URL: redis?.url as string,
      ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      ALGOSERVE_WORKER_ALGORITHMS: only,
    })
    t.after(async () => {
      child.process.kill('SIGTERM')
      await child.exit
    })
    return child
  }
  const takesStray = worker('StrayAnswers')
  const takesDies = worker('DiesAtStart')
  const [strayUrl, diesUrl] = await Promise.all([listening(takesStray), listening(takesDies)])

  const pid = takesStray.process.pid as number
  const strayCounts = new Set<number>()
  let diesSeen = 0
  for (const end = Date.now() + WATCH_MS; Date.now() < end; await sleep(20)) {
    strayCounts.add(programProcesses(pid, STRAY).length)
    diesSeen += programProcesses(pid, DIES).length
  }
  assert.equal(diesSeen, 0, 'the program of DiesAtStart, which this worker does not take, was started')
  assert.deepEqual([...strayCounts], [1], 'one process of StrayAnswers all along')

  const ready = await fetch(`${strayUrl}/readyz`)
  const readyBody = (await ready.json()) as { checks: Record<string, boolean> }
  assert.equal(ready.status, 200, JSON.stringify(readyBody))
  assert.equal(readyBody.checks['process:StrayAnswers'], true)

  // The other way round: DiesAtStart taken, so the worker is not ready while its program keeps dying.
  const notReady = await fetch(`${diesUrl}/readyz`)
  const notReadyBody = (await notReady.json()) as { checks: Record<string, boolean> }
  assert.equal(notReady.status, 503, JSON.stringify(notReadyBody))
  assert.equal(notReadyBody.checks['process:DiesAtStart'], false)
})
