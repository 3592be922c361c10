// Request bounds per algorithm through HTTP: an algorithm's own bounds let through a body the defaults
// refuse and refuse one past them, naming the bound, its value and how to raise it, on its invoke route
// and on POST /jobs (both backends); a program declares them in its algorithm.json; a declaration above
// its ceiling stops the start.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ConfigError } from '../../src/errors.js'
import { type ModuleFolder, moduleSource, writeModules } from '../helpers/algorithms.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'

const EDGES_PARAMS = `{
    type: 'object', required: ['edges'],
    properties: {
      edges: {
        type: 'array', maxItems: 5000,
        items: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' }, w: { type: 'integer' } } },
      },
    },
  }`
const countsEdges = (name: string, bounds: string) =>
  moduleSource(`
  name: '${name}',
  version: '1.0.0',
  description: 'Counts the edges of a graph.',
  params: ${EDGES_PARAMS},
  result: { type: 'object', required: ['edges'], properties: { edges: { type: 'integer' } } },
  run: (params) => ({ edges: params.edges.length }),
  ${bounds}`)

const MODULES = {
  // 3,000 edges of 4 values each: 12,000 values, past the default of 10,000.
  'edges.mjs': countsEdges('Edges', 'maxJsonValues: 25000, maxBodyBytes: 2097152, maxStringLength: 2000000,'),
  'plain.mjs': countsEdges('PlainEdges', ''),
  // Room for a large body, but strings as long as the default allows.
  'roomy.mjs': countsEdges('Roomy', 'maxBodyBytes: 2097152,'),
  'tight.mjs': countsEdges(
    'Tight',
    'maxJsonValues: 50, maxJsonDepth: 4, maxBodyBytes: 600, maxStringLength: 40, maxDigits: 10,',
  ),
}

/** The same counter as a program, its bounds in its algorithm.json. */
function writeProgram(dir: string): string {
  const folder = join(dir, 'edges-program')
  mkdirSync(folder)
  writeFileSync(
    join(folder, 'algorithm.json'),
    JSON.stringify({
      name: 'EdgesProgram',
      version: '1.0.0',
      description: 'Counts the edges of a graph, in a program.',
      params: { type: 'object', required: ['edges'], properties: { edges: { type: 'array' } } },
      result: { type: 'object' },
      maxJsonValues: 25000,
      maxJsonDepth: 8,
      command: ['node', 'program.mjs'],
    }),
  )
  writeFileSync(
    join(folder, 'program.mjs'),
    `import { createInterface } from 'node:readline'
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, params } = JSON.parse(line)
  process.stdout.write(JSON.stringify({ id, result: { edges: params.edges.length } }) + '\\n')
})
`,
  )
  return folder
}

const edges = (count: number) =>
  `{"edges": [${Array.from({ length: count }, (_, i) => `{"from": ${i}, "to": ${i + 1}, "w": 1}`).join(', ')}]}`
const jobOf = (algorithm: string, params: string) => `{"algorithm": "${algorithm}", "params": ${params}}`

interface Problem {
  type: string
  loc: (string | number)[]
  ctx: { error: string; bound?: string; limit?: number; how_to_raise?: string }
}
const problemOf = (json: unknown): Problem => (json as { detail: Problem[] }).detail[0] as Problem

const noted = (length: number) => `{"edges": [], "note": "${'x'.repeat(length)}"}`

/** A 422 for a string past `limit` characters, at `at`, naming `owner`'s contract. */
function assertStringRefused(
  response: { status: number; json: unknown },
  limit: number,
  owner: string,
  at: number,
) {
  assert.equal(response.status, 422, JSON.stringify(response.json).slice(0, 300))
  const problem = problemOf(response.json)
  assert.equal(problem.type, 'json_invalid')
  assert.deepEqual(problem.loc, ['body', at])
  assert.deepEqual(
    { ...problem.ctx, how_to_raise: undefined },
    { error: 'a string is too long', bound: 'maxStringLength', limit, how_to_raise: undefined },
  )
  assert.match(
    problem.ctx.how_to_raise ?? '',
    new RegExp(
      `^raise it with 'maxStringLength' in ${owner}'s contract \\(up to 16777216, the ceiling ` +
        'ALGOSERVE_MAX_STRING_LENGTH_CEILING sets\\), or with ALGOSERVE_MAX_STRING_LENGTH for algorithms',
    ),
  )
}

/** The offset where a body passes `limit` values, counted as the parser counts them. */
function assertValuesRefused(response: { status: number; json: unknown }, limit: number, owner: string) {
  assert.equal(response.status, 422, JSON.stringify(response.json))
  const problem = problemOf(response.json)
  assert.equal(problem.type, 'json_invalid')
  assert.equal(problem.loc[0], 'body')
  assert.deepEqual(
    { ...problem.ctx, how_to_raise: undefined },
    { error: 'too many values', bound: 'maxJsonValues', limit, how_to_raise: undefined },
  )
  assert.match(
    problem.ctx.how_to_raise ?? '',
    new RegExp(`'maxJsonValues' in ${owner}'s contract \\(up to 1000000`),
  )
  assert.match(problem.ctx.how_to_raise ?? '', /ALGOSERVE_MAX_JSON_VALUES for algorithms that declare none/)
}

let folder: ModuleFolder
before(() => {
  folder = writeModules(MODULES)
  writeProgram(folder.dir)
})
after(() => folder.remove())

describe('the invoke route of an algorithm', () => {
  let server: TestApp
  before(async () => {
    server = await startApp({ algorithms: [folder.dir] })
  })
  after(() => server.close())

  test('its own maxJsonValues lets through a body the default refuses', async () => {
    const body = edges(3000)
    const ok = await postRaw(`${server.url}/algorithms/Edges/invoke`, body)
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual((ok.json as { result: unknown }).result, { edges: 3000 })
    const refused = await postRaw(`${server.url}/algorithms/PlainEdges/invoke`, body)
    assertValuesRefused(refused, 10_000, 'PlainEdges')
    // At the 10,001st value, the offset docs/algorithms.md shows for this body.
    assert.equal(problemOf(refused.json).loc[1], 87_779)
  })

  test('a body past its bounds is refused naming the bound, its value and how to raise it', async () => {
    const url = `${server.url}/algorithms/Tight/invoke`
    // The body and its array, then 4 values an edge: 12 edges are 50 values; the 13th edge is the 51st.
    assert.equal((await postRaw(url, edges(12))).status, 200)
    const many = await postRaw(url, edges(13))
    assertValuesRefused(many, 50, 'Tight')
    assert.equal(problemOf(many.json).loc[1], edges(13).lastIndexOf('{"from"'))

    const deep = await postRaw(url, '{"edges": [{"from": [[[1]]]}]}')
    assert.equal(deep.status, 422)
    assert.deepEqual(
      { ...problemOf(deep.json).ctx, how_to_raise: undefined },
      { error: 'nesting is too deep', bound: 'maxJsonDepth', limit: 4, how_to_raise: undefined },
    )
    assert.match(
      problemOf(deep.json).ctx.how_to_raise ?? '',
      /'maxJsonDepth' in Tight's contract \(up to 256/,
    )

    const large = await postRaw(url, `{"edges": [], "note": "${'x'.repeat(600)}"}`)
    assert.equal(large.status, 413)
    const error = large.json as { error: string; message: string; details: Record<string, unknown> }
    assert.equal(error.error, 'PAYLOAD_TOO_LARGE')
    assert.match(
      error.message,
      /^The request body is larger than the limit of 600 bytes \(maxBodyBytes\): raise it/,
    )
    assert.equal(error.details.limit_bytes, 600)
    assert.equal(error.details.bound, 'maxBodyBytes')
    assert.match(String(error.details.how_to_raise), /'maxBodyBytes' in Tight's contract \(up to 16777216/)

    const digits = await postRaw(url, '{"edges": [{"from": 12345678901}]}')
    assert.equal(digits.status, 400)
    assert.match(
      (digits.json as { message: string }).message,
      /^edges\.0\.from has 11 digits; at most 10 are allowed \(maxDigits\): raise it with 'maxDigits' in Tight's/,
    )
  })

  test('its own maxBodyBytes lets through a body past the default of 1 MiB', async () => {
    const body = `{"edges": [], "note": "${'x'.repeat(1_500_000)}"}`
    const ok = await postRaw(`${server.url}/algorithms/Edges/invoke`, body)
    assert.equal(ok.status, 200, ok.text.slice(0, 300))
    const refused = await postRaw(`${server.url}/algorithms/PlainEdges/invoke`, body)
    assert.equal(refused.status, 413)
    const error = refused.json as { message: string; details: Record<string, unknown> }
    assert.equal(error.details.limit_bytes, 1_048_576)
    assert.match(error.message, /raise it with 'maxBodyBytes' in PlainEdges's contract/)
  })

  test('a string past its maxStringLength is refused at its opening quote; one within it taken', async () => {
    const url = `${server.url}/algorithms/Tight/invoke`
    assert.equal((await postRaw(url, noted(40))).status, 200)
    assertStringRefused(await postRaw(url, noted(41)), 40, 'Tight', noted(41).indexOf('"x'))
    // A key is a string too.
    const key = `{"edges": [], "${'k'.repeat(41)}": 1}`
    assertStringRefused(await postRaw(url, key), 40, 'Tight', key.indexOf('"k'))
  })

  test('its own maxStringLength lets through a string the default refuses', async () => {
    const body = noted(1_500_000)
    assert.equal((await postRaw(`${server.url}/algorithms/Edges/invoke`, body)).status, 200)
    const refused = await postRaw(`${server.url}/algorithms/Roomy/invoke`, body)
    assertStringRefused(refused, 1_048_576, 'Roomy', body.indexOf('"x'))
  })

  test('a program declares its bounds in its algorithm.json', async () => {
    const ok = await postRaw(`${server.url}/algorithms/EdgesProgram/invoke`, edges(3000))
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual((ok.json as { result: unknown }).result, { edges: 3000 })
    const deep = await postRaw(
      `${server.url}/algorithms/EdgesProgram/invoke`,
      `{"edges": ${'['.repeat(9)}${']'.repeat(9)}}`,
    )
    assert.equal(deep.status, 422)
    assert.equal(problemOf(deep.json).ctx.limit, 8)
  })

  test('GET /algorithms/{name} shows the bounds in effect', async () => {
    const limitsOf = async (name: string) =>
      ((await (await fetch(`${server.url}/algorithms/${name}`)).json()) as { limits: unknown }).limits
    assert.deepEqual(await limitsOf('Tight'), {
      max_body_bytes: 600,
      max_json_values: 50,
      max_json_depth: 4,
      max_string_length: 40,
      max_digits: 10,
    })
    assert.deepEqual(await limitsOf('EdgesProgram'), {
      max_body_bytes: 1_048_576,
      max_json_values: 25_000,
      max_json_depth: 8,
      max_string_length: 1_048_576,
      max_digits: 4300,
    })
    assert.deepEqual(await limitsOf('PrimeChecker'), {
      max_body_bytes: 1_048_576,
      max_json_values: 10_000,
      max_json_depth: 32,
      max_string_length: 1_048_576,
      max_digits: 4300,
    })
  })

  test('POST /invoke keeps the defaults; its refusals name the setting, as the built-in has no contract to edit', async () => {
    const response = await postRaw(`${server.url}/invoke`, `{"number": 1, "x": [${'0,'.repeat(10_000)}0]}`)
    assert.equal(response.status, 422, JSON.stringify(response.json))
    const problem = problemOf(response.json)
    assert.deepEqual(problem.ctx, {
      error: 'too many values',
      bound: 'maxJsonValues',
      limit: 10_000,
      how_to_raise: 'raise it with ALGOSERVE_MAX_JSON_VALUES',
    })
  })
})

forEachBackend((backend) => {
  describe('POST /jobs', () => {
    let server: TestApp
    before(async () => {
      server = await backend.start({ algorithms: [folder.dir] })
    })
    after(() => server.close())

    test("is read under the largest bounds and held to the named algorithm's", async () => {
      const created = await postRaw(`${server.url}/jobs`, jobOf('Edges', edges(3000)))
      assert.equal(created.status, 202, created.text)
      const { job_id } = created.json as { job_id: string }
      const job = (await (await fetch(`${server.url}/jobs/${job_id}?wait=30`)).json()) as Record<
        string,
        unknown
      >
      assert.equal(job.status, 'completed', JSON.stringify(job))
      assert.deepEqual(job.result, { edges: 3000 })

      const plain = await postRaw(`${server.url}/jobs`, jobOf('PlainEdges', edges(3000)))
      assertValuesRefused(plain, 10_000, 'PlainEdges')
      // At the offset where the body passed the named algorithm's bound, as a parse under it finds: the
      // body, "PlainEdges", params and edges, then 4 values an edge: the 10,001st opens the 2,500th edge.
      const body = jobOf('PlainEdges', edges(3000))
      let at = -1
      for (let edge = 0; edge < 2500; edge++) at = body.indexOf('{"from"', at + 1)
      assert.equal(problemOf(plain.json).loc[1], at)
    })

    test("a body past the named algorithm's bounds is refused naming them, in the wrapped shape", async () => {
      assertValuesRefused(await postRaw(`${server.url}/jobs`, jobOf('Tight', edges(13))), 50, 'Tight')
      const large = await postRaw(
        `${server.url}/jobs`,
        jobOf('Tight', `{"edges": [], "note": "${'x'.repeat(600)}"}`),
      )
      assert.equal(large.status, 413)
      const { detail } = large.json as {
        detail: { error: string; message: string; details: Record<string, unknown> }
      }
      assert.equal(detail.error, 'PAYLOAD_TOO_LARGE')
      assert.equal(detail.details.limit_bytes, 600)
      assert.match(detail.message, /\(maxBodyBytes\): raise it with 'maxBodyBytes' in Tight's contract/)
      const deep = await postRaw(`${server.url}/jobs`, jobOf('Tight', '{"edges": [{"from": [[1]]}]}'))
      assert.equal(deep.status, 422)
      assert.equal(problemOf(deep.json).ctx.bound, 'maxJsonDepth')
      const digits = await postRaw(`${server.url}/jobs`, jobOf('Tight', '{"edges": [{"from": 12345678901}]}'))
      assert.equal(digits.status, 400)
      assert.match(
        (digits.json as { detail: { message: string } }).detail.message,
        /at most 10 are allowed \(maxDigits\)/,
      )
      // Within them, taken.
      assert.equal((await postRaw(`${server.url}/jobs`, jobOf('Tight', edges(11)))).status, 202)
    })

    test("a body within the largest bound but past the named algorithm's is refused naming it", async () => {
      const params = `{"edges": [], "note": "${'x'.repeat(1_500_000)}"}`
      assert.equal((await postRaw(`${server.url}/jobs`, jobOf('Edges', params))).status, 202)
      const refused = await postRaw(`${server.url}/jobs`, jobOf('PlainEdges', params))
      assert.equal(refused.status, 413)
      const { detail } = refused.json as { detail: { message: string; details: Record<string, unknown> } }
      assert.equal(detail.details.limit_bytes, 1_048_576)
      assert.match(detail.message, /raise it with 'maxBodyBytes' in PlainEdges's contract/)
    })

    test("a string past the named algorithm's maxStringLength is refused where it opens", async () => {
      const tight = jobOf('Tight', noted(41))
      assertStringRefused(await postRaw(`${server.url}/jobs`, tight), 40, 'Tight', tight.indexOf('"x'))
      assert.equal((await postRaw(`${server.url}/jobs`, jobOf('Tight', noted(40)))).status, 202)
      // Read under Edges' 2,000,000 characters, held to Roomy's default.
      const params = noted(1_500_000)
      assert.equal((await postRaw(`${server.url}/jobs`, jobOf('Edges', params))).status, 202)
      const roomy = jobOf('Roomy', params)
      assertStringRefused(await postRaw(`${server.url}/jobs`, roomy), 1_048_576, 'Roomy', roomy.indexOf('"x'))
    })

    test('a body past every bound is refused before it is parsed', async () => {
      const response = await postRaw(
        `${server.url}/jobs`,
        jobOf('Edges', `{"edges": [], "note": "${'x'.repeat(2_100_000)}"}`),
      )
      assert.equal(response.status, 413)
      assert.equal(
        (response.json as { detail: { details: { limit_bytes: number } } }).detail.details.limit_bytes,
        2_097_152,
      )
    })
  })
})

test('a declaration above its ceiling stops the start, naming the algorithm and both values', async () => {
  await assert.rejects(
    startApp({ algorithms: [folder.dir], maxJsonValuesCeiling: 20_000 }),
    (error: Error) =>
      error instanceof ConfigError &&
      new RegExp(
        `^Algorithm ${folder.dir}/edges(-program/algorithm\\.json|\\.mjs): 'maxJsonValues' is 25000, above the ` +
          'ceiling of 20000 that ALGOSERVE_MAX_JSON_VALUES_CEILING sets; raise ALGOSERVE_MAX_JSON_VALUES_CEILING or ' +
          'declare at most 20000\\.$',
      ).test(error.message),
  )
  await assert.rejects(
    startApp({ algorithms: [folder.dir], maxStringLengthCeiling: 1_500_000 }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message ===
        `Algorithm ${folder.dir}/edges.mjs: 'maxStringLength' is 2000000, above the ceiling of 1500000 that ` +
          'ALGOSERVE_MAX_STRING_LENGTH_CEILING sets; raise ALGOSERVE_MAX_STRING_LENGTH_CEILING or declare at ' +
          'most 1500000.',
  )
})
