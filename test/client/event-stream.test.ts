// Reading a text/event-stream in chunks: the events are those of the whole text read at once, however it
// is cut (a CRLF cut in two, and empty chunks, included), and a long event arrives whole. What each line
// means is tested against the service's streams (test/routes/job-control/events.test.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { readEvents, type StreamEvent } from '../../src/client/event-stream.js'

async function* inChunks(chunks: string[]): AsyncGenerator<string> {
  for (const chunk of chunks) yield chunk
}

async function eventsOf(chunks: string[]): Promise<StreamEvent[]> {
  const events: StreamEvent[] = []
  for await (const event of readEvents(inChunks(chunks))) events.push(event)
  return events
}

const lineEnd = fc.constantFrom('\n', '\r', '\r\n')
const line = fc.oneof(
  fc.constant(''),
  fc
    .constantFrom('data', 'event', 'id', ':', 'retry')
    .chain((field) =>
      fc.string({ maxLength: 6 }).map((value) => `${field}: ${value.replace(/[\r\n]/g, '')}`),
    ),
)
const stream = fc.array(fc.tuple(line, lineEnd), { maxLength: 20 }).map((lines) => lines.flat().join(''))

test('the events are those of the whole text, however the text is cut into chunks', async () => {
  await fc.assert(
    fc.asyncProperty(stream, fc.array(fc.nat(), { maxLength: 6 }), async (text, cuts) => {
      // Two cuts at one place make an empty chunk, which a reader must take too.
      const at = cuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b)
      const chunks = [0, ...at].map((from, i) => text.slice(from, [...at, text.length][i]))
      assert.deepEqual(await eventsOf(chunks), await eventsOf([text]))
    }),
  )
})

test('a CRLF cut between two chunks is one line end', async () => {
  assert.deepEqual(await eventsOf(['data: a\r', '\ndata: b\r', '\n\r', '\n']), [
    { id: '', event: 'message', data: 'a\nb' },
  ])
  // With an empty chunk between its halves.
  assert.deepEqual(await eventsOf(['event: end\r', '', '\ndata: a\n\n']), [
    { id: '', event: 'end', data: 'a' },
  ])
})

test('an event of 8 MB in 64 KiB chunks is read whole', async () => {
  const text = `event: end\ndata: ${'x'.repeat(8 * 1024 * 1024)}\n\n`
  const chunks: string[] = []
  for (let from = 0; from < text.length; from += 65_536) chunks.push(text.slice(from, from + 65_536))
  const [end] = await eventsOf(chunks)
  assert.equal(end?.event, 'end')
  assert.equal(end?.data.length, 8 * 1024 * 1024)
})
