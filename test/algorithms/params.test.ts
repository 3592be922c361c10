// The 422 problems of params that fail an algorithm's schema: a value outside an `enum` or other than a
// `const` is told the values allowed, as pydantic words them; and the same over HTTP, on invoke and jobs.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { checkModule } from '../../src/algorithms/contract.js'
import { readParams } from '../../src/algorithms/params.js'
import { SchemaValidationError } from '../../src/errors.js'
import { moduleSource, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'

const MANY = Array.from({ length: 20 }, (_, i) => `v${i}`)

const MEMBERS = `
  name: 'Shapes',
  version: '1.0.0',
  description: 'Echoes its shape.',
  params: {
    type: 'object',
    properties: {
      shape: { enum: ['circle', 'square', 'triangle'] },
      mixed: { enum: [1, 'two', null] },
      unit: { const: 'cm' },
      many: { enum: ${JSON.stringify(MANY)} },
    },
  },
  result: { type: 'object' },
  run: (params) => ({ shape: params.shape ?? null }),`

const modules = writeModules({ 'shapes.mjs': moduleSource(MEMBERS) })
const shapes = checkModule((await import(modules.file('shapes.mjs'))).default, 'shapes.mjs')

/** The problems readParams reports for these params. */
function problems(params: Record<string, unknown>, loc = ['body']) {
  try {
    readParams(shapes, params, { maxDigits: 4300 }, loc)
  } catch (error) {
    assert.ok(error instanceof SchemaValidationError)
    return error.problems
  }
  return assert.fail('the params were accepted')
}

test('a value outside an enum: type enum, the values allowed in msg and ctx.expected', () => {
  assert.deepEqual(problems({ shape: 'hexagon' }), [
    {
      type: 'enum',
      loc: ['body', 'shape'],
      msg: "Input should be 'circle', 'square' or 'triangle'",
      input: 'hexagon',
      ctx: { expected: "'circle', 'square' or 'triangle'" },
    },
  ])
  // Values other than strings are written as JSON.
  assert.equal(problems({ mixed: 2 })[0]?.msg, "Input should be 1, 'two' or null")
})

test('a long list is cut after 16 values, saying how many more there are', () => {
  const [problem] = problems({ many: 'x' }, ['body', 'params'])
  assert.deepEqual(problem?.loc, ['body', 'params', 'many'])
  assert.equal(
    problem?.msg,
    `Input should be ${MANY.slice(0, 16)
      .map((value) => `'${value}'`)
      .join(', ')} or one of 4 more`,
  )
})

test('a value other than a const: type literal_error, naming the one value allowed', () => {
  assert.deepEqual(problems({ unit: 'mm' }), [
    {
      type: 'literal_error',
      loc: ['body', 'unit'],
      msg: "Input should be 'cm'",
      input: 'mm',
      ctx: { expected: "'cm'" },
    },
  ])
})

let server: TestApp
before(async () => {
  server = await startApp({ algorithms: [modules.dir] })
})
after(async () => {
  await server.close()
  modules.remove()
})

test('over HTTP: the same 422 on POST /algorithms/{name}/invoke and on POST /jobs', async () => {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as { detail: { msg: string }[] } }
  }
  const invoked = await post('/algorithms/Shapes/invoke', { shape: 'hexagon' })
  assert.equal(invoked.status, 422)
  assert.equal(invoked.body.detail[0]?.msg, "Input should be 'circle', 'square' or 'triangle'")
  const job = await post('/jobs', { algorithm: 'Shapes', params: { shape: 'hexagon' } })
  assert.equal(job.status, 422)
  assert.deepEqual(job.body.detail, [
    {
      type: 'enum',
      loc: ['body', 'params', 'shape'],
      msg: "Input should be 'circle', 'square' or 'triangle'",
      input: 'hexagon',
      ctx: { expected: "'circle', 'square' or 'triangle'" },
    },
  ])
  assert.equal((await post('/algorithms/Shapes/invoke', { shape: 'circle' })).status, 200)
})
