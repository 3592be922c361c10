// What the client sends, byte for byte: each command's method, path, query, headers and body, seen by a
// real HTTP server of this test's own that records every request and answers `{}`. Numbers in params
// reach the wire with every digit, as they were typed.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { cli } from '../helpers/cli.js'

interface Request {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

const requests: Request[] = []
let server: Server
let url = ''

before(async () => {
  server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => {
      body += chunk
    })
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
after(() => new Promise((resolve) => server.close(resolve)))

/** Runs the command against the recording server and returns the one request it made. */
async function sent(...args: string[]): Promise<Request> {
  const before = requests.length
  const run = await cli([...args, '--url', url])
  assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`)
  assert.equal(requests.length, before + 1, 'one request')
  return requests[before] as Request
}

test('call <algorithm>: POST /algorithms/{name}/invoke with the params as the body, every digit kept', async () => {
  const request = await sent(
    'call',
    'Collatz',
    '--params',
    '{"n": 1, "top": 2.50}',
    'n=18446744073709551617',
    'name=Ada Lovelace',
    'flags=[true,null]',
  )
  assert.equal(request.method, 'POST')
  assert.equal(request.url, '/algorithms/Collatz/invoke')
  assert.equal(request.headers['content-type'], 'application/json')
  assert.equal(
    request.body,
    '{"n":18446744073709551617,"top":2.50,"name":"Ada Lovelace","flags":[true,null]}',
  )
})

test('call <number>: POST /invoke as before', async () => {
  const request = await sent('call', '+000123456789012345678901234567890')
  assert.equal(request.url, '/invoke')
  assert.equal(request.body, '{"number":123456789012345678901234567890}')
})

test('jobs create: the algorithm and its params, the webhook and the idempotency key; a number is PrimeChecker', async () => {
  const job = await sent(
    'jobs',
    'create',
    'WordCount',
    'text=the cat',
    'top=2',
    '--webhook',
    'https://example.com/hook',
    '--idempotency-key',
    'order-1',
  )
  assert.equal(job.method, 'POST')
  assert.equal(job.url, '/jobs')
  assert.equal(job.headers['idempotency-key'], 'order-1')
  assert.equal(
    job.body,
    '{"algorithm":"WordCount","params":{"text":"the cat","top":2},"webhook":"https://example.com/hook"}',
  )
  const prime = await sent('jobs', 'create', '-12')
  assert.equal(prime.body, '{"algorithm":"PrimeChecker","params":{"number":-12}}')
})

test('algorithms [name] and jobs list --algorithm: the GETs they make', async () => {
  assert.equal((await sent('algorithms')).url, '/algorithms')
  const one = await sent('algorithms', 'Word_Count-2')
  assert.equal(one.method, 'GET')
  assert.equal(one.url, '/algorithms/Word_Count-2')
  const list = await sent('jobs', 'list', '--algorithm', 'Collatz', '--status', 'completed', '--limit', '5')
  assert.equal(list.url, '/jobs?status=completed&algorithm=Collatz&limit=5')
})

test('Name@version: the version path of algorithms and call, the version member of jobs create', async () => {
  assert.equal((await sent('algorithms', 'Sum@^1.2')).url, '/algorithms/Sum/versions/%5E1.2')
  const call = await sent('call', 'Sum@1.2.0', 'a=1', 'b=2')
  assert.equal(call.method, 'POST')
  assert.equal(call.url, '/algorithms/Sum/versions/1.2.0/invoke')
  assert.equal(call.body, '{"a":1,"b":2}')
  const range = await sent('call', 'Sum@1.x', 'a=1')
  assert.equal(range.url, '/algorithms/Sum/versions/1.x/invoke')
  const job = await sent('jobs', 'create', 'Sum@^1', 'a=1', 'b=2')
  assert.equal(job.url, '/jobs')
  assert.equal(job.body, '{"algorithm":"Sum","version":"^1","params":{"a":1,"b":2}}')
  // Without a version, as before: no member.
  assert.equal((await sent('jobs', 'create', 'Sum', 'a=1')).body, '{"algorithm":"Sum","params":{"a":1}}')
})
