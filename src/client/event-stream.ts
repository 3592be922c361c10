// Reading a text/event-stream (GET /jobs/{job_id}/events) as the HTML standard's EventSource does:
// lines of `field: value`, an event dispatched at each blank line, comments (`:`) skipped.

export interface StreamEvent {
  /** The event's id, or the last one given before it ('' for none). */
  id: string
  /** The event's type; 'message' when none is given. */
  event: string
  data: string
}

/**
 * The events of a stream of text chunks, as they complete. The unfinished line is kept in pieces and
 * joined once its end comes, and each chunk is searched once: a line of many chunks (an end with a large
 * result) costs its length, not its length once per chunk.
 */
export async function* readEvents(chunks: AsyncIterable<string>): AsyncGenerator<StreamEvent> {
  let pieces: string[] = []
  // The last chunk ended with a CR: an LF that starts the next one is the rest of that line end.
  let afterCr = false
  let id = ''
  let event = ''
  let data: string[] = []
  for await (const chunk of chunks) {
    if (chunk === '') continue
    let start = afterCr && chunk.startsWith('\n') ? 1 : 0
    afterCr = false
    let lf = chunk.indexOf('\n', start)
    let cr = chunk.indexOf('\r', start)
    while (lf !== -1 || cr !== -1) {
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr)
      pieces.push(chunk.slice(start, end))
      const line = pieces.join('')
      pieces = []
      start = end + 1
      if (end === cr) {
        if (end === chunk.length - 1) afterCr = true
        else if (chunk[start] === '\n') start++
      }
      if (lf !== -1 && lf < start) lf = chunk.indexOf('\n', start)
      if (cr !== -1 && cr < start) cr = chunk.indexOf('\r', start)
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
    if (start < chunk.length) pieces.push(chunk.slice(start))
  }
}

/** The text chunks of a fetch response's body. */
export async function* bodyText(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>)
    yield decoder.decode(bytes, { stream: true })
}
