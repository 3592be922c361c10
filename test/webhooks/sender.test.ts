// One attempt's ends, against real receivers on loopback ports: an answer, the time limit, and a
// shutdown cutting the attempt short (before it starts, or while the receiver holds it).
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

const TIME_LIMIT_MS = 300
const senderWithin = (timeoutMs: number) =>
  new WebhookSender({ userAgent: 'test', secret: null, allowPrivate: true, timeoutMs })
const sender = senderWithin(TIME_LIMIT_MS)
// For the answers themselves: the first attempt loads the HTTP client, which a loaded machine can take
// longer than the short limit to do.
const patientSender = senderWithin(30_000)
const receivers: Receiver[] = []
after(async () => {
  await Promise.all([sender.close(), patientSender.close()])
  await Promise.all(receivers.map((r) => r.close()))
})

async function receiver(answer: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(answer)
  receivers.push(started)
  return started
}

const message = (url: string) => ({ id: 'msg_1', url, payload: '{"job_id":"0123456789ab"}' })

test('an answer is its status', async () => {
  const ok = await receiver(() => 204)
  const failing = await receiver(() => 503)
  assert.deepEqual(await patientSender.send(message(ok.url)), { kind: 'success', statusCode: 204 })
  assert.deepEqual(await patientSender.send(message(failing.url)), {
    kind: 'failure',
    error: 'the receiver answered 503',
    statusCode: 503,
  })
})

test('a receiver that holds the attempt: cut at the time limit', async () => {
  const hanging = await receiver(() => 'hang')
  const started = performance.now()
  const result = await sender.send(message(hanging.url))
  const took = performance.now() - started
  assert.deepEqual(result, { kind: 'failure', error: `no answer within ${TIME_LIMIT_MS} ms` })
  assert.ok(took >= TIME_LIMIT_MS - 5 && took < TIME_LIMIT_MS + 1000, `${took} ms`)
})

test('a shutdown cuts an attempt short, and one already stopped sends nothing', async () => {
  const hanging = await receiver(() => 'hang')
  const shutdown = new AbortController()
  const attempt = sender.send(message(hanging.url), shutdown.signal)
  await hanging.waitFor(1, 2000)
  shutdown.abort()
  assert.deepEqual(await attempt, { kind: 'aborted' })
  assert.deepEqual(await sender.send(message(hanging.url), shutdown.signal), { kind: 'aborted' })
  assert.equal(hanging.received.length, 1, 'no request after the stop')
})
