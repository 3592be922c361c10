import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signWebhook } from '../../src/webhooks/signature.js'

test('reproduces the Standard Webhooks specification test vector', () => {
  assert.equal(
    signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    ),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  )
})
