// A receiver that hangs holds only the slots it started with (it never answers, so they never grow);
// another receiver's webhook goes out within a second whatever the first one does; on every job backend.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob } from '../helpers/jobs.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { sleep } from '../helpers/time.js'

forEachBackend((backend) => {
  let server: TestApp
  const receivers: Receiver[] = []
  before(async () => {
    // The real schedule: each attempt on the dead receiver holds its slot for the full 10 s.
    server = await backend.start({ webhookAllowPrivate: true })
  })
  after(async () => {
    await server.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  test('300 deliveries hanging on one receiver do not hold up another receiver', {
    timeout: 120_000,
  }, async () => {
    const dead = await startReceiver(() => 'hang')
    const alive = await startReceiver(() => 204)
    receivers.push(dead, alive)
    // Far more deliveries to it than its slots, all due at once.
    for (let batch = 0; batch < 15; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          createJob(server.url, {
            algorithm: 'PrimeChecker',
            params: { number: batch * 20 + i },
            webhook: dead.url,
          }),
        ),
      )
    }
    await dead.waitFor(16, 10_000)
    await sleep(500)
    const hanging = dead.received.length
    assert.ok(hanging <= 16, `${hanging} attempts in flight to the one receiver: more than its share`)

    const created = Date.now()
    const other = await createJob(server.url, {
      algorithm: 'PrimeChecker',
      params: { number: 11 },
      webhook: alive.url,
    })
    const [delivered] = await alive.waitFor(1, 9000)
    assert.match(delivered?.body ?? '', new RegExp(`"job_id":"${other.json.job_id}"`))
    const waited = (delivered?.at as number) - created
    assert.ok(waited < 1000, `the other receiver's webhook went out after ${waited} ms`)
  })
})
