// The baseline for bench/http/invoke.sh: a bare node:http server that reads the body, runs JSON.parse on it,
// and answers a fixed JSON text (the service's own answer for the same case, so the sizes match).
import http from 'node:http'

const [port, answer] = [Number(process.argv[2]), process.argv[3] ?? '{}']
const body = Buffer.from(answer)

http
  .createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'))
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.length,
      })
      response.end(body)
    })
  })
  .listen(port, '127.0.0.1')
