// What the client prints for people, from bodies as the service sends them: the next page's command.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse } from 'lossless-json'
import {
  formatAlgorithm,
  formatAlgorithms,
  formatInvoke,
  formatJob,
  formatList,
  progressBar,
  progressLine,
} from '../../src/client/format.js'

const page = { jobs: [], next_cursor: 'eyJ0IjoxfQ' }
const more = (text: string) => /^More: (.*)$/m.exec(text)?.[1]

test("the next page's command keeps every filter, the limit and a --url, quoted for a shell", () => {
  assert.equal(
    more(formatList(page, { status: 'failed', limit: '5' }, 'http://10.0.0.7:8000')),
    'algoserve jobs list --status failed --limit 5 --url http://10.0.0.7:8000 --cursor eyJ0IjoxfQ',
  )
  assert.equal(
    more(formatList(page, { status: null, limit: null })),
    'algoserve jobs list --cursor eyJ0IjoxfQ',
  )
  // A word a shell would split or expand is quoted; a quote inside it too.
  assert.equal(
    more(formatList(page, { status: "it's", limit: null }, 'http://h:1/x?a=1&b=2')),
    `algoserve jobs list --status 'it'\\''s' --url 'http://h:1/x?a=1&b=2' --cursor eyJ0IjoxfQ`,
  )
  assert.equal(more(formatList({ jobs: [], next_cursor: null }, { status: null, limit: null })), undefined)
  assert.equal(
    more(formatList(page, { status: null, algorithm: 'Collatz', limit: null })),
    'algoserve jobs list --algorithm Collatz --cursor eyJ0IjoxfQ',
  )
  assert.equal(
    formatList({ jobs: [] }, { status: 'failed', algorithm: 'Collatz', limit: null }),
    'No failed jobs of Collatz.',
  )
})

test("any algorithm's result: a row per member, numbers with every digit, lists and objects on one line", () => {
  const body = parse(
    '{"request_id":"r1","status":"success","result":{"steps":111,"peak":18446744073709551617,' +
      '"top":[{"word":"the","count":2}],"tags":["a","b"],"ok":true},' +
      '"metadata":{"algorithm":"Collatz","version":"1.0.0","elapsed_time":0.0021}}',
  )
  const text = formatInvoke(body)
  assert.match(text, /^algorithm +Collatz 1\.0\.0$/m)
  assert.match(text, /^result\.steps +111$/m)
  assert.match(text, /^result\.peak +18446744073709551617$/m)
  assert.match(text, /^result\.top +\[\{"word":"the","count":2\}\]$/m)
  assert.match(text, /^result\.tags +a, b$/m)
  assert.match(text, /^result\.ok +true$/m)
  assert.match(text, /^elapsed +2\.1 ms$/m)
  // PrimeChecker's stays in words.
  const prime = formatInvoke({
    result: { number: 91, is_prime: false, factors: [7, 13] },
    metadata: { algorithm: 'PrimeChecker', version: '1.0.0', elapsed_time: 0.001 },
  })
  assert.match(prime, /^number +91 is not prime$/m)
  assert.doesNotMatch(prime, /^algorithm/m)
  const job = formatJob({ job_id: 'j', status: 'completed', algorithm: 'SlowCount', result: 5 })
  assert.match(job, /^result +5$/m)
})

test('jobs list: the algorithm of each job and its result, cut', () => {
  const jobs = [
    { job_id: 'a1', status: 'completed', algorithm: 'PrimeChecker', created_at: 't', result: { number: 97 } },
    {
      job_id: 'b2',
      status: 'completed',
      algorithm: 'WordCount',
      created_at: 't',
      result: { words: 'x'.repeat(60) },
    },
    { job_id: 'c3', status: 'pending', algorithm: 'Collatz', created_at: 't', result: null },
  ]
  const lines = formatList({ jobs, next_cursor: null }, { status: null, limit: null }).split('\n')
  assert.match(lines[0] ?? '', /^ID +STATUS +ALGORITHM +CREATED +RESULT$/)
  assert.match(lines[1] ?? '', /^a1 +completed +PrimeChecker +t +97$/)
  assert.match(lines[2] ?? '', /^b2 +completed +WordCount +t +words: x{32}…$/)
  assert.match(lines[3] ?? '', /^c3 +pending +Collatz +t +-$/)
})

test('algorithms: a table; one algorithm: its schemas and its examples as commands', () => {
  assert.match(
    formatAlgorithms({
      algorithms: [
        { name: 'Collatz', version: '1.0.0', description: 'Steps.', workers: 2 },
        { name: 'Old', version: '0.1.0', description: 'Counted by nobody.', workers: null },
      ],
    }),
    /^NAME +VERSION +WORKERS +DESCRIPTION\nCollatz +1\.0\.0 +2 +Steps\.\nOld +0\.1\.0 +\? +Counted by nobody\.$/,
  )
  assert.equal(formatAlgorithms({ algorithms: [] }), 'No algorithms.')
  const text = formatAlgorithm({
    name: 'Collatz',
    version: '1.0.0',
    description: 'Steps.',
    params: { type: 'object' },
    result: { type: 'object' },
    examples: [{ params: { n: 27 } }, { params: { s: "it's" } }],
    timeout_ms: 5000,
    limits: {
      max_body_bytes: 2048,
      max_json_values: 25000,
      max_json_depth: 8,
      max_string_length: 4096,
      max_digits: 4300,
    },
  })
  assert.match(text, /^time limit +5000 ms$/m)
  assert.match(
    text,
    /^request bounds +2048 bytes, 25000 JSON values, depth 8, 4096 characters a string, 4300 digits an integer$/m,
  )
  assert.match(text, /^Params \(JSON Schema\):\n\{\n {2}"type": "object"\n\}$/m)
  assert.match(text, /^ {2}algoserve call Collatz --params '\{"n":27\}'$/m)
  assert.ok(text.includes(`algoserve call Collatz --params '{"s":"it'\\''s"}'`), text)
})

test('a progress bar: twenty cells filled to the percentage (rounded down), the message after it', () => {
  const message = 'sieve: 812 of 1,930 relations'
  assert.equal(progressBar('running', { progress: 0.42, message }), `[########············]  42%  ${message}`)
  assert.equal(progressBar('running', { progress: 0.999, message: null }), '[####################]  99%')
  assert.equal(progressBar('running', { progress: 1, message: null }), '[####################] 100%')
  assert.equal(
    progressBar('running', { progress: 0, message: 'start' }),
    '[····················]   0%  start',
  )
  assert.equal(progressBar('pending', null), 'pending')
})

test('a progress line: the state, the percentage and the message', () => {
  assert.equal(progressLine('running', { progress: 0.42, message: 'sieve' }), 'running 42% sieve')
  assert.equal(progressLine('running', { progress: 0.5, message: null }), 'running 50%')
  assert.equal(progressLine('running', null), 'running')
})

test('a job with its params: a row per member, then the worker and the attempt of its metadata', () => {
  const job = formatJob({
    job_id: 'j',
    status: 'failed',
    algorithm: 'ShortestPath',
    params: { source: 'Z', edges: [[1, 2]], weight: parse('123456789012345678901234567890') },
    error: "source 'Z' is not a node of the graph",
    metadata: null,
  })
  assert.match(job, /^params\.source +Z$/m)
  assert.match(job, /^params\.edges +\[\[1,2\]\]$/m)
  assert.match(job, /^params\.weight +123456789012345678901234567890$/m)
  assert.doesNotMatch(job, /^(worker|attempt)/m)
  assert.match(formatJob({ job_id: 'j', params: {} }), /^params +\{\}$/m)
  const done = formatJob({ job_id: 'j', metadata: { elapsed_time: 0.5, worker: 'box:42', attempt: 2 } })
  assert.match(done, /^worker +box:42$/m)
  assert.match(done, /^attempt +2$/m)
})
