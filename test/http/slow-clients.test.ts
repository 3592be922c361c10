// Slow and stalled clients are cut, and the bodies held at once are bounded.
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, test } from 'node:test'
import { defaultConfig } from '../../src/config.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { rawExchange } from '../helpers/raw-http.js'
import { sleep } from '../helpers/time.js'

let server: TestApp
before(async () => {
  server = await startApp({
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
    keepAliveTimeoutMs: 300,
    maxBufferedBodyBytes: 64 * 1024,
  })
})
after(() => server.close())

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket))
    socket.on('error', reject)
  })
}

function closed(socket: Socket): Promise<{ afterMs: number; text: string }> {
  const started = Date.now()
  let text = ''
  socket.on('data', (chunk) => {
    text += chunk
  })
  return new Promise((resolve) => socket.on('close', () => resolve({ afterMs: Date.now() - started, text })))
}

test('the defaults are what a user expects of a public server', () => {
  const config = defaultConfig()
  assert.equal(config.headersTimeoutMs, 10_000)
  assert.equal(config.requestTimeoutMs, 30_000)
  assert.equal(config.keepAliveTimeoutMs, 5_000)
  assert.equal(config.maxBufferedBodyBytes, 64 * 1_048_576)
})

test('a body sent one byte at a time is cut at the request timeout with a 408', async () => {
  const socket = await open(server.url)
  const done = closed(socket)
  socket.write(
    'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
  )
  const trickle = setInterval(() => socket.writable && socket.write(' '), 100)
  const { afterMs, text } = await done
  clearInterval(trickle)
  assert.match(text, /^HTTP\/1\.1 408 /)
  assert.match(text, /"error":"REQUEST_TIMEOUT"/)
  // The timeout (800 ms) is checked every 400 ms here.
  assert.ok(afterMs < 2500, `cut after ${afterMs} ms`)
})

test('a body that never comes is cut too', async () => {
  const socket = await open(server.url)
  const done = closed(socket)
  socket.write(
    'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
  )
  const { afterMs, text } = await done
  assert.match(text, /^HTTP\/1\.1 408 /)
  assert.ok(afterMs < 2500, `cut after ${afterMs} ms`)
})

test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
  const socket = await open(server.url)
  const done = closed(socket)
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  const { afterMs, text } = await done
  assert.match(text, /^HTTP\/1\.1 200 /)
  assert.match(text, /keep-alive/i)
  assert.ok(afterMs >= 250 && afterMs < 2000, `closed after ${afterMs} ms`)
})

test('bodies held at once are bounded: past the budget, 503 with Retry-After', async () => {
  // Two clients send 25 KB of a 30 KB body and stall; a third 30 KB body would go over 64 KiB.
  const stalled = await Promise.all([open(server.url), open(server.url)])
  for (const socket of stalled) {
    socket.on('error', () => {})
    socket.write(
      `POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30000\r\n\r\n{"number": 7, "x": "${'a'.repeat(25_000)}`,
    )
  }
  await sleep(200)
  const refused = await postRaw(`${server.url}/invoke`, `{"number": 7, "x": "${'b'.repeat(30_000)}"}`)
  assert.equal(refused.status, 503, refused.text)
  assert.equal((refused.json as { error: string }).error, 'SERVICE_UNAVAILABLE')
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  // Once the stalled ones are cut (the request timeout) their bytes are given back.
  await Promise.all(stalled.map((socket) => closed(socket)))
  const taken = await postRaw(`${server.url}/invoke`, `{"number": 7, "x": "${'c'.repeat(30_000)}"}`)
  assert.equal(taken.status, 200, taken.text)
})

test('chunked bodies count against the same budget as they come', async () => {
  // The same as above with no Content-Length: the bytes are counted as they arrive.
  const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`
  const stalled = await Promise.all([open(server.url), open(server.url)])
  for (const socket of stalled) {
    socket.on('error', () => {})
    socket.write(
      'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        chunk(`{"number": 7, "x": "${'a'.repeat(25_000)}`),
    )
  }
  await sleep(200)
  const refused = await rawExchange(
    server.url,
    'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n' +
      `Connection: close\r\n\r\n${chunk(`{"number": 7, "x": "${'b'.repeat(30_000)}"}`)}0\r\n\r\n`,
  )
  assert.equal(refused.status, 503, refused.body)
  assert.equal((JSON.parse(refused.body) as { error: string }).error, 'SERVICE_UNAVAILABLE')
  assert.ok(Number(refused.headers['retry-after']) >= 1)
  await Promise.all(stalled.map((socket) => closed(socket)))
  const taken = await rawExchange(
    server.url,
    'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n' +
      `Connection: close\r\n\r\n${chunk(`{"number": 7, "x": "${'c'.repeat(30_000)}"}`)}0\r\n\r\n`,
  )
  assert.equal(taken.status, 200, taken.body)
})

test('a small answer still comes while slow clients wait', async () => {
  const answer = await rawExchange(
    server.url,
    'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  )
  assert.equal(answer.status, 200)
})
