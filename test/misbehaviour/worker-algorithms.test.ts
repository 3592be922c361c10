// `algoserve worker` with ALGOSERVE_WORKER_ALGORITHMS naming one program algorithm of two loaded: only
// that one's program runs in it, and its /readyz depends on that program alone. The other program
// (test/fixtures/misbehaving/dies-at-start-js) exits at every start. Once with the JavaScript programs,
// once with their Python twins (*-py).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listening, start } from '../helpers/child.js'
import { fixture, NO_PYTHON, NOT_LINUX, programProcesses } from '../helpers/misbehaviour.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { sleep, until } from '../helpers/time.js'

const LANGUAGES = [
  { language: 'JavaScript', ending: 'js', suffix: '', skip: false as const },
  { language: 'Python', ending: 'py', suffix: 'Py', skip: NO_PYTHON },
]
/** Longer than the service's first wait (1 s) before it starts again a program that failed to start. */
const WATCH_MS = 2500

let redis: RedisServer | undefined
before(async () => {
  if (!skipWithoutRedis) redis = await startRedis()
})
after(() => redis?.close())

for (const { language, ending, suffix, skip } of LANGUAGES) {
  const STRAY = fixture(`stray-answers-${ending}`)
  const DIES = fixture(`dies-at-start-${ending}`)
  const strayName = `StrayAnswers${suffix}`
  const diesName = `DiesAtStart${suffix}`
  test(`${language}: a worker runs the programs of the algorithms it takes, and is ready on theirs alone`, {
    skip: skipWithoutRedis || NOT_LINUX || skip,
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
    const takesStray = worker(strayName)
    const takesDies = worker(diesName)
    const [strayUrl, diesUrl] = await Promise.all([listening(takesStray), listening(takesDies)])

    const pid = takesStray.process.pid as number
    const strayCounts = new Set<number>()
    let diesSeen = 0
    for (const end = Date.now() + WATCH_MS; Date.now() < end; await sleep(20)) {
      strayCounts.add(programProcesses(pid, STRAY).length)
      diesSeen += programProcesses(pid, DIES).length
    }
    assert.equal(diesSeen, 0, `the program of ${diesName}, which this worker does not take, was started`)
    assert.deepEqual([...strayCounts], [1], `one process of ${strayName} all along`)

    const ready = await fetch(`${strayUrl}/readyz`)
    const readyBody = (await ready.json()) as { checks: Record<string, boolean> }
    assert.equal(ready.status, 200, JSON.stringify(readyBody))
    assert.equal(readyBody.checks[`process:${strayName}`], true)

    // The other way round: the dying one taken, so the worker is not ready while its program keeps dying
    // (from its first death on: on a loaded machine the first start of Python can take seconds).
    let notReadyBody: { checks: Record<string, boolean> } = { checks: {} }
    const status = await until(
      async () => {
        const notReady = await fetch(`${diesUrl}/readyz`)
        notReadyBody = (await notReady.json()) as { checks: Record<string, boolean> }
        return notReady.status === 503 && notReady.status
      },
      20_000,
      () => `the worker taking ${diesName} still ready: ${JSON.stringify(notReadyBody)}`,
    )
    assert.equal(status, 503)
    assert.equal(notReadyBody.checks[`process:${diesName}`], false)
  })
}
