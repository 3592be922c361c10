// The baseline for bench/http/wrk/invoke.sh: a bare node:http server that reads the body, runs JSON.parse on
// it, and answers a fixed JSON text (the service's own answer for the same case, so the sizes match). A third
// argument N makes it busy-wait N µs of its own before each answer: a server dearer by a known amount of pure
// computation, to tell what else a slower server pays per request (bench/http/wrk/invoke-ladder.sh).
import http from 'node:http'

const [port, answer, spinUs] = [
  Number(process.argv[2]),
  process.argv[3] ?? '{}',
  Number(process.argv[4] ?? 0),
]
const body = Buffer.from(answer)
const spinMs = spinUs / 1000

http
  .createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const until = performance.now() + spinMs
      while (performance.now() < until);
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.length,
      })
      response.end(body)
    })
  })
  .listen(port, '127.0.0.1')
