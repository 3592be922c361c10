// docs/operating.md, Shutdown: a shutdown as an orchestrator does it (SIGTERM, drain, exit) with clients
// under load seeing no failed request, SIGINT from a terminal still prompt, and a server started by
// `npm start` stopping when npm is stopped.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import http from 'node:http'
import { connect } from 'node:net'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDataDir } from './helpers/app.js'
import { listening, serveFresh } from './helpers/child.js'
import { sleep, until } from './helpers/time.js'

interface Outcome {
  at: number
  status: number
  connection: string | undefined
}

function request(agent: http.Agent, url: string, path: string, body?: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const call = http.request(
      `${url}${path}`,
      {
        agent,
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      },
      (response) => {
        response.resume()
        response.on('end', () =>
          resolve({
            at: Date.now(),
            status: response.statusCode ?? 0,
            connection: response.headers.connection,
          }),
        )
      },
    )
    call.on('error', reject)
    call.end(body)
  })
}

test('SIGTERM: /readyz 503 at once, the listener drains, clients under load see no failure', {
  timeout: 60_000,
}, async (t) => {
  const child = serveFresh(t, ['--drain-delay-ms', '2000', '--keep-alive-timeout-ms', '800'])
  const url = await listening(child)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  t.after(() => agent.destroy())

  // An idle keep-alive connection, which must close at its keep-alive timeout, before the drain ends.
  const { hostname, port } = new URL(url)
  const idleSocket = connect(Number(port), hostname)
  idleSocket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  await once(idleSocket, 'data')
  const idleClosed = once(idleSocket, 'close').then(() => Date.now())

  const outcomes: Outcome[] = []
  const failures: unknown[] = []
  let sending = true
  const loops = Array.from({ length: 4 }, async (_, i) => {
    while (sending) {
      try {
        outcomes.push(
          await request(
            agent,
            url,
            i % 2 === 0 ? '/healthz' : '/invoke',
            i % 2 === 0 ? undefined : '{"number": 97}',
          ),
        )
      } catch (error) {
        failures.push(error)
      }
    }
  })
  await sleep(300)
  const signalled = Date.now()
  child.process.kill('SIGTERM')
  const notReady = await until(
    async () => {
      const readiness = await fetch(`${url}/readyz`)
      return readiness.status === 503 ? Date.now() : false
    },
    1000,
    '/readyz answered 503',
  )
  // A load balancer stops routing once readiness fails; until then the load goes on.
  await sleep(1200)
  sending = false
  await Promise.all(loops)

  assert.deepEqual(failures, [], 'no request failed or was reset')
  assert.ok(outcomes.length > 20, `${outcomes.length} requests`)
  assert.ok(
    outcomes.every((o) => o.status === 200),
    'every answer is 200',
  )
  assert.ok(notReady - signalled < 1000, `/readyz 503 after ${notReady - signalled} ms`)
  // Answers that came well after readiness turned: their requests were sent during the drain.
  const draining = outcomes.filter((o) => o.at > notReady + 100)
  assert.ok(draining.length > 0, 'answers during the drain')
  assert.ok(
    draining.every((o) => o.connection === 'close'),
    `every answer during the drain says Connection: close: ${JSON.stringify(draining.filter((o) => o.connection !== 'close').map((o) => ({ ...o, at: o.at - notReady })))}`,
  )
  const exited = child.exit.then((code) => ({ code, at: Date.now() }))
  const closedAt = await idleClosed
  const { code, at } = await exited
  assert.equal(code, 0, child.output())
  assert.ok(closedAt < signalled + 2000, 'the idle keep-alive connection closed during the drain')
  assert.ok(
    at - signalled >= 2000,
    `the listener stayed open for the drain delay (exit after ${at - signalled} ms)`,
  )
  await assert.rejects(fetch(`${url}/healthz`), 'the listener is closed after the drain')
})

test('SIGINT stops promptly, without the drain delay', { timeout: 30_000 }, async (t) => {
  const child = serveFresh(t, ['--drain-delay-ms', '20000'])
  await listening(child)
  const signalled = Date.now()
  child.process.kill('SIGINT')
  assert.equal(await child.exit, 0, child.output())
  assert.ok(Date.now() - signalled < 5000, `exited after ${Date.now() - signalled} ms`)
})

test('started by npm, the server stops when npm dies of a SIGTERM it did not pass on', {
  timeout: 30_000,
}, async (t) => {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // A parent that, like npm, starts the server and dies of SIGTERM without passing it on.
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
  const parent = spawn(
    process.execPath,
    [
      '-e',
      `const c = require('node:child_process').spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(main)}, 'serve', '--port', '0', '--data-dir', ${JSON.stringify(dataDir)}, '--drain-delay-ms', '500'], { stdio: 'inherit', env: { ...process.env, npm_lifecycle_event: 'start' } }); console.log('server pid ' + c.pid)`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  parent.stdout?.on('data', (chunk) => {
    output += chunk
  })
  const url = await until(
    () => /Server listening at (http:\/\/[0-9.:]+)/.exec(output)?.[1],
    20_000,
    () => output,
  )
  const pid = Number(/server pid (\d+)/.exec(output)?.[1])
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  parent.kill('SIGTERM')
  await once(parent, 'exit')
  const alive = () => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  t.after(() => alive() && process.kill(pid, 'SIGKILL'))
  await until(() => !alive(), 10_000, 'the orphaned server exited')
})
