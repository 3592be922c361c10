// A program that outlives its service if it can (test/fixtures/misbehaving/stubborn-js, and its Python
// twin stubborn-py): it ignores the end of stdin, and on a call starts a child in a session of its own
// and spins. The service as operators run it (`algoserve serve`, or `algoserve worker` on Redis) is
// SIGKILLed in the middle of that call: within a few seconds no process started for the algorithm may remain.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { type Child, listening, serveFresh, start } from '../helpers/child.js'
import { createJob } from '../helpers/jobs.js'
import {
  descendantsOf,
  describeProcesses,
  fixture,
  killLeft,
  leftBehind,
  NO_PYTHON,
  NOT_LINUX,
  programProcesses,
} from '../helpers/misbehaviour.js'
import { until } from '../helpers/time.js'

const PROGRAMS = [
  { name: 'Stubborn', folder: fixture('stubborn-js'), skip: false as const },
  { name: 'StubbornPy', folder: fixture('stubborn-py'), skip: NO_PYTHON },
]

forEachBackend((backend) => {
  const role = backend.name === 'embedded' ? 'serve' : 'worker'
  for (const { name, folder, skip } of PROGRAMS) {
    test(`${name}: a SIGKILL of \`algoserve ${role}\` mid-call leaves no process of the algorithm behind`, {
      skip: NOT_LINUX || skip,
    }, async (t) => {
      let service: Child
      let apiUrl: string
      if (backend.name === 'embedded') {
        service = serveFresh(t, ['--algorithms', folder])
        apiUrl = await listening(service)
      } else {
        // The jobs go in through an API of the test's own; the worker is the process killed.
        const api: TestApp = await backend.start({ algorithms: [folder], runJobs: false })
        t.after(() => api.close())
        service = start(['worker', '--worker-port', '0', '--algorithms', folder], {
          ALGOSERVE_REDIS_URL: api.config.redisUrl as string,
          ALGOSERVE_REDIS_PREFIX: api.config.redisPrefix,
        })
        await listening(service)
        apiUrl = api.url
      }
      const servicePid = service.process.pid as number
      const [program] = await until(() => programProcesses(servicePid, folder), 20_000, 'the program running')
      assert.ok(program !== undefined)
      const created = await createJob(apiUrl, { algorithm: name, params: { mode: 'spin' } })
      assert.equal(created.status, 202)
      // The program and what it started, recorded by id before the kill: the child leaves its group and
      // would be reparented away from the service once the program's parent is gone.
      const started = await until(
        () => {
          const below = descendantsOf(program.pid)
          return below.some((entry) => entry.sid === entry.pid) && [program, ...below]
        },
        20_000,
        'the program started its child',
      )
      t.after(() => killLeft(started))
      service.process.kill('SIGKILL')
      await service.exit
      await until(
        () => leftBehind(started).length === 0,
        5000,
        () => `left behind: ${describeProcesses(leftBehind(started))}`,
      )
    })
  }
})
