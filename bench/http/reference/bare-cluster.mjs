// bench/http/reference/bare-server.mjs in PROCESSES processes sharing its port through node:cluster, as
// `algoserve serve --http-processes N` shares it: the most that N processes of a server can add on this
// machine, with no framework, validation or metrics to pay for. Arguments: PROCESSES PORT ANSWER.
import cluster from 'node:cluster'

const processes = Number(process.argv[2])
if (cluster.isPrimary) {
  cluster.setupPrimary({ args: process.argv.slice(3) })
  for (let i = 0; i < processes; i++) cluster.fork()
} else {
  await import('./bare-server.mjs')
}
