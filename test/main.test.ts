// The command line as operators run it: a child process, its exit codes and its graceful shutdown.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { threadsFor, usableCpus } from '../src/execution/usable-cpus.js'
import { defaultJobConcurrency } from '../src/service.js'
import { moduleSource, validMembers, writeModules } from './helpers/algorithms.js'
import { listening, loggedLines, serveFresh, start } from './helpers/child.js'
import { RSA_100 } from './helpers/numbers.js'
import { freshPrefix, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { sleep } from './helpers/time.js'

test('a bad setting stops the process with a message naming it', async () => {
  const child = start(['serve'], { ALGOSERVE_MAX_DIGITS: 'many' })
  assert.equal(await child.exit, 2)
  assert.match(child.output(), /ALGOSERVE_MAX_DIGITS/)
  assert.doesNotMatch(child.output(), /at .*\.ts:/, 'no stack trace for a bad setting')
})

test('an unknown command is refused in one line and a hint, not the whole usage', async () => {
  const child = start(['serv'])
  assert.equal(await child.exit, 2)
  assert.equal(
    child.output(),
    "algoserve: unknown command 'serv'\nRun 'algoserve --help' for the commands and their options.\n",
  )
})

test('algoserve worker without a Redis URL is refused, naming the setting', async () => {
  const child = start(['worker'], { ALGOSERVE_REDIS_URL: '' })
  assert.equal(await child.exit, 2)
  assert.match(child.output(), /ALGOSERVE_REDIS_URL/)
})

// Refused before it connects: nothing need listen at the URL (a worker that did not refuse would wait
// for Redis there until the timeout).
test('algoserve worker with more than one HTTP process is refused, saying the setting is for serve', {
  timeout: 60_000,
}, async () => {
  const child = start(['worker', '--http-processes', '2'], { ALGOSERVE_REDIS_URL: 'redis://127.0.0.1:1' })
  assert.equal(await child.exit, 2)
  assert.match(
    child.stderr(),
    /^algoserve: ALGOSERVE_HTTP_PROCESSES is a setting of algoserve serve; a worker is one process/,
  )
})

test('a module that breaks the contract stops the start, naming the file and the problem', async () => {
  const modules = writeModules({
    'broken.mjs': moduleSource(validMembers('Adder').replace("version: '1.0.0'", "version: 'one'")),
  })
  try {
    const child = start(['serve', '--algorithms', modules.dir])
    assert.equal(await child.exit, 2)
    assert.equal(
      child.output(),
      `algoserve: Algorithm module ${modules.file('broken.mjs')}: 'version' must be a semantic version such as 1.0.0.\n`,
    )
  } finally {
    modules.remove()
  }
})

test('a module that loads in the process but not in a worker thread stops the start, naming the file', async (t) => {
  const modules = writeModules({
    'main-only.mjs': `import { isMainThread } from 'node:worker_threads'
if (!isMainThread) throw new Error('this module runs on the main thread only')
${moduleSource(validMembers('MainOnly'))}`,
  })
  try {
    const child = serveFresh(t, ['--algorithms', modules.dir])
    // Not at a first run: the service must not start listening at all.
    const listens = listening(child).then(
      () => 'listening',
      () => 'exited',
    )
    assert.equal(await Promise.race([child.exit, listens]), 2)
    assert.equal(
      child.stderr(),
      `algoserve: A worker thread could not start: Algorithm module ${modules.file('main-only.mjs')} could not be loaded: this module runs on the main thread only\n`,
    )
  } finally {
    modules.remove()
  }
})

test('ALGOSERVE_ALGORITHMS serves a module file, in the process and its worker threads', async (t) => {
  const modules = writeModules({ 'adder.mjs': moduleSource(validMembers('Adder')) })
  t.after(() => modules.remove())
  const child = serveFresh(t, [], { ALGOSERVE_ALGORITHMS: modules.file('adder.mjs') })
  const url = await listening(child)
  const response = await fetch(`${url}/algorithms/Adder/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a": 20, "b": 22}',
  })
  assert.equal(response.status, 200)
  assert.deepEqual(((await response.json()) as { result: unknown }).result, { sum: 42 })
  child.process.kill('SIGINT')
  assert.equal(await child.exit, 0)
})

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  // The timeout catches a shutdown that waits for its grace period (60 s) instead of for the work.
  test(`${signal}: requests in flight finish, then the process exits 0`, { timeout: 30_000 }, async (t) => {
    const child = serveFresh(t, ['--invoke-factor-budget-ms', '1500', '--shutdown-grace-ms', '60000'])
    const url = await listening(child)
    assert.equal((await fetch(`${url}/healthz`)).status, 200)
    // RSA-100 keeps a worker busy for the whole factorisation budget.
    const inFlight = fetch(`${url}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"number": ${RSA_100}}`,
    })
    await sleep(300)
    child.process.kill(signal)
    const response = await inFlight
    assert.equal(response.status, 200)
    const body = (await response.json()) as { result: { factorization_complete: boolean } }
    assert.equal(body.result.factorization_complete, false)
    assert.equal(await child.exit, 0, child.output())
    assert.match(child.output(), /shutting down/)
    assert.match(child.output(), /shutdown complete/)
    await assert.rejects(fetch(`${url}/healthz`), 'the port is closed after the shutdown')
  })
}

test('a variable that looks like a setting but is none gets a warning naming the closest one', async (t) => {
  const child = serveFresh(t, [], { ALGOSERVE_PROT: '9000' })
  const url = await listening(child)
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  child.process.kill('SIGTERM')
  assert.equal(await child.exit, 0)
  const warning = loggedLines<{ level: number; msg: string }>(child, 'ALGOSERVE_PROT')
  assert.deepEqual(warning, [
    {
      ...warning[0],
      level: 40,
      msg: 'ALGOSERVE_PROT is not a setting and is ignored; did you mean ALGOSERVE_PORT?',
    },
  ])
})

test('a worker given a young generation smaller than V8 default warns, naming the fix', {
  skip: skipWithoutRedis,
}, async (t) => {
  const redis = await startRedis()
  t.after(() => redis.close())
  const env = { ALGOSERVE_REDIS_URL: redis.url, ALGOSERVE_REDIS_PREFIX: freshPrefix() }
  const warnings = async (nodeFlags: string[]) => {
    const child = start(['worker', '--worker-port', '0'], env, [], nodeFlags)
    await listening(child)
    child.process.kill('SIGTERM')
    assert.equal(await child.exit, 0)
    return loggedLines<{ msg: string }>(child, 'young generation').map((line) => line.msg)
  }
  const [warning, ...more] = await warnings(['--max-semi-space-size=1'])
  assert.match(warning ?? '', /node dist\/main\.js worker/)
  assert.deepEqual(more, [])
  // npm run worker's: V8's default; and a larger one given on purpose.
  assert.deepEqual(await warnings([]), [])
  assert.deepEqual(await warnings(['--max-semi-space-size=32']), [])
})

test('secrets appear in no log line and no error message', async (t) => {
  const secret = `whsec_${Buffer.alloc(8, 1).toString('base64')}`
  const refused = start(['serve'], { ALGOSERVE_WEBHOOK_SECRET: secret })
  assert.equal(await refused.exit, 2)
  assert.match(refused.output(), /ALGOSERVE_WEBHOOK_SECRET/)
  assert.ok(!refused.output().includes(secret.slice(6)), refused.output())

  const key = 'k3y-that-must-never-be-logged'
  const hash = createHash('sha256').update(key).digest('hex')
  const child = serveFresh(t, ['--log-level', 'trace'], {
    ALGOSERVE_API_KEYS: `sha256:${hash}`,
  })
  const url = await listening(child)
  for (const authorization of [`Bearer ${key}`, `Bearer ${key}x`, key]) {
    await fetch(`${url}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: '{"number": 97}',
    })
  }
  child.process.kill('SIGTERM')
  assert.equal(await child.exit, 0)
  assert.match(child.output(), /request completed/)
  assert.ok(!child.output().includes(key), 'the key is not logged')
  assert.ok(!child.output().includes(hash), 'nor its hash')
})

test('a graceful stop writes the access line of every request answered, none twice', async (t) => {
  const child = serveFresh(t, ['--drain-delay-ms', '0'])
  const url = await listening(child)
  // Concurrent, and fewer than a batch holds: the lines are still held when SIGTERM comes.
  const ids = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const response = await fetch(`${url}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ number: 1000 + i }),
      })
      return ((await response.json()) as { request_id: string }).request_id
    }),
  )
  child.process.kill('SIGTERM')
  assert.equal(await child.exit, 0)
  const logged = loggedLines<{ request_id: string }>(child, '"request completed"').map(
    (line) => line.request_id,
  )
  assert.deepEqual(logged.sort(), ids.sort(), 'one access line for each answer')
})

test('the ready line says how many worker threads run, where that number came from, and the job concurrency', async (t) => {
  const readyLine = async (env: Record<string, string>) => {
    const child = serveFresh(t, [], { ALGOSERVE_WORKER_THREADS: '0', ...env })
    await listening(child)
    child.process.kill('SIGTERM')
    assert.equal(await child.exit, 0)
    const [line = {}] = loggedLines(child, '"msg":"ready"')
    return line
  }
  // By default, from the CPUs the process may use (test/execution/usable-cpus.test.ts reads them).
  const usable = usableCpus()
  const byDefault = await readyLine({})
  assert.deepEqual(
    [byDefault.threads, byDefault.threads_from, byDefault.cpus],
    [threadsFor(usable.cpus), usable.source, usable.cpus],
  )
  assert.equal(byDefault.job_concurrency, defaultJobConcurrency(threadsFor(usable.cpus)))
  const set = await readyLine({ ALGOSERVE_WORKER_THREADS: '3', ALGOSERVE_JOB_CONCURRENCY: '5' })
  assert.deepEqual(
    [set.threads, set.threads_from, set.cpus, set.job_concurrency],
    [3, 'ALGOSERVE_WORKER_THREADS', undefined, 5],
  )
})
