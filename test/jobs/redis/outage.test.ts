// The outage log alone, on a short reminder interval: one warning however many connections fail, a
// reminder per interval while Redis stays away, one line when it is back, and silence after that.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { OutageLog } from '../../../src/jobs/redis/outage.js'
import { sleep } from '../../helpers/time.js'

test('one warning, reminders at the interval, one line when back', async () => {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  const outage = new OutageLog(log as unknown as FastifyBaseLogger, '127.0.0.1:6390', 100)
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6390'), { code: 'ECONNREFUSED' })
  for (let i = 0; i < 50; i++) outage.lost(refused)
  await sleep(350)
  outage.back()
  outage.back()
  await sleep(250)
  outage.stop()

  const messages = lines.map((line) => line.msg)
  assert.equal(messages[0], 'Redis cannot be reached: jobs answer 503 until it can')
  assert.equal(lines[0]?.code, 'ECONNREFUSED')
  assert.equal(lines[0]?.redis, '127.0.0.1:6390')
  const reminders = messages.filter((msg) => msg === 'Redis still cannot be reached').length
  assert.ok(reminders >= 2 && reminders <= 3, `${reminders} reminders in 350 ms at one per 100 ms`)
  assert.equal(messages.at(-1), 'Redis is reachable again')
  assert.equal(messages.filter((msg) => msg === 'Redis is reachable again').length, 1)
})
