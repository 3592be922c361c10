import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InputRuleError } from '../../src/errors.js'
import { checkWebhookUrl, isPublicAddress } from '../../src/webhooks/address-policy.js'

test('non-public addresses of every kind are told from public ones', () => {
  const nonPublic = [
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.1',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '2001:db8::1',
    '2002:7f00:1::1',
    '2001::1',
    '3fff::1',
    'not-an-address',
  ]
  for (const address of nonPublic) assert.equal(isPublicAddress(address), false, address)
  const publicOnes = [
    '1.1.1.1',
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
  ]
  for (const address of publicOnes) assert.equal(isPublicAddress(address), true, address)
})

test('webhook URLs: absolute http(s), at most 2048 characters', () => {
  assert.equal(checkWebhookUrl('https://example.com/hook?x=1', false), 'https://example.com/hook?x=1')
  assert.equal(checkWebhookUrl(`https://example.com/${'a'.repeat(2028)}`, false).length, 2048)
  for (const bad of [
    'example.com/hook',
    'ftp://example.com/',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'http://',
    `https://example.com/${'a'.repeat(2029)}`,
  ]) {
    assert.throws(() => checkWebhookUrl(bad, true), InputRuleError, bad)
  }
})

test('literal private addresses and localhost are refused at creation, naming the setting', () => {
  const refused = [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://LOCALHOST./hook',
    'http://api.localhost/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://10.0.0.5/',
    'http://169.254.169.254/latest/meta-data',
    // Spellings the URL parser turns into 127.0.0.1.
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
  ]
  for (const url of refused) {
    const error = (() => {
      try {
        checkWebhookUrl(url, false)
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    assert.ok(error instanceof InputRuleError, url)
    assert.match(error.message, /ALGOSERVE_WEBHOOK_ALLOW_PRIVATE=true/)
    assert.deepEqual(error.details, { field: 'webhook', value: url })
  }
  // Allowed when the setting says so; names are checked only when they are resolved.
  assert.equal(checkWebhookUrl('http://127.0.0.1:8080/hook', true), 'http://127.0.0.1:8080/hook')
  assert.equal(checkWebhookUrl('http://internal.example/hook', false), 'http://internal.example/hook')
})
