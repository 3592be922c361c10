// Reading a text/event-stream (GET /jobs/{job_id}/events) as the HTML standard's EventSource does:
// lines of `field: value`, an event dispatched at each blank line, comments (`:`) skipped.

export interface StreamEvent {
  /** The event's id, or the last one given before it ('' for none). */
  id: string
  /** The event's type; 'message' when none is given. */
  event: string
  data: string
}

/** The events of a stream of text chunks, as they complete. */
export async function* readEvents(chunks: AsyncIterable<string>): AsyncGenerator<StreamEvent> {
  let buffer = ''
  let id = ''
  let event = ''
  let data: string[] = []
  for await (const chunk of chunks) {
    buffer += chunk
    let end = buffer.search(/\r\n|\r|\n/)
    // A CR that ends the chunk may be half of a CRLF: it waits for the next chunk.
    while (end !== -1 && !(end === buffer.length - 1 && buffer[end] === '\r')) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
      end = buffer.search(/\r\n|\r|\n/)
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') }
        event = ''
        data = []
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
      if (field === 'data') data.push(value)
      else if (field === 'event') event = value
      else if (field === 'id' && !value.includes('\0')) id = value
    }
  }
}

/** The text chunks of a fetch response's body. */
export async function* bodyText(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>)
    yield decoder.decode(bytes, { stream: true })
}
