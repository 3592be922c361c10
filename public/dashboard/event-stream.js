// The browser's reader of a text/event-stream body, for the open job's progress. It reads as
// src/client/event-stream.ts does; the page cannot load files from src/, so it keeps its own.

/** The events of a text/event-stream body as they complete, as EventSource reads them. */
export async function* streamEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let id = ''
  let type = ''
  let data = []
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += value
      let end = buffer.search(/\r\n|\r|\n/)
      // A CR that ends the buffer may be half of a CRLF: it waits for the next chunk.
      while (end !== -1 && !(end === buffer.length - 1 && buffer[end] === '\r')) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
        end = buffer.search(/\r\n|\r|\n/)
        if (line === '') {
          if (data.length > 0) yield { id, event: type || 'message', data: data.join('\n') }
          type = ''
          data = []
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':')
          const field = colon === -1 ? line : line.slice(0, colon)
          const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
          if (field === 'data') data.push(value)
          else if (field === 'event') type = value
          else if (field === 'id' && !value.includes('\0')) id = value
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}
