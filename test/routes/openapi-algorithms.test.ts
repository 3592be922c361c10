// The OpenAPI document with user algorithms loaded: each one's params and result as named components
// that cannot clash, an invoke operation per algorithm whose example succeeds, the job's result as a
// oneOf discriminated by `algorithm`, and the POST /jobs body a branch per algorithm and one for any
// other name, which a validating proxy passes on to the 404. Schemas that refer to parts of themselves
// ($defs, recursion, TypeBox's references by $id) are shown with every reference resolving in the
// document, and still check what they checked.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { moduleSource, REFERRING_MODULES, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { requestBodyValidator } from '../helpers/document-validator.js'

const modules = writeModules({
  ...REFERRING_MODULES,
  // Both call their params type Input, as TypeBox users may.
  'adder.mjs': moduleSource(
    validMembers('Adder').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
  ),
  'other.mjs': moduleSource(
    validMembers('Other').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
  ),
})

type Schema = Record<string, unknown>
type Examples = Record<string, { summary: string; value: unknown }>
let server: TestApp
let document: {
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; requestBody?: { content: Record<string, { examples?: Examples }> } }
    >
  >
  components: { schemas: Record<string, Schema> }
}
before(async () => {
  server = await startApp({ algorithms: [modules.dir] })
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document
})
after(async () => {
  await server.close()
  modules.remove()
})

test("each algorithm's schemas are components named after it, whatever it calls them", () => {
  const { schemas } = document.components
  for (const name of ['Adder', 'Other', 'PrimeChecker']) {
    assert.ok(schemas[`${name}.Params`], `${name}.Params`)
    assert.ok(schemas[`${name}.Result`], `${name}.Result`)
  }
  assert.equal(schemas.Input, undefined)
  assert.deepEqual(((schemas['Adder.Params']?.properties ?? {}) as Schema).b, { type: 'integer', minimum: 0 })
})

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The named examples of an operation's request body. */
const requestExamples = (path: string): Examples =>
  document.paths[path]?.post?.requestBody?.content['application/json']?.examples ?? {}

test("an invoke operation per algorithm, with the algorithm's examples named, each one succeeding", async () => {
  for (const name of ['Adder', 'Graph', 'Other', 'PrimeChecker', 'Tree']) {
    const operation = document.paths[`/algorithms/${name}/invoke`]?.post
    assert.equal(operation?.operationId, `invoke_${name}`)
    const examples = requestExamples(`/algorithms/${name}/invoke`)
    assert.ok(Object.keys(examples).length > 0, name)
    for (const example of Object.values(examples)) {
      assert.equal((await post(`/algorithms/${name}/invoke`, example.value)).status, 200, name)
    }
  }
  // Both of PrimeChecker's, by name; Adder's own; Other's, which has none, a sample of its schema.
  assert.deepEqual(requestExamples('/algorithms/PrimeChecker/invoke'), {
    PrimeChecker: { summary: 'PrimeChecker: {"number":97}', value: { number: 97 } },
    'PrimeChecker-2': {
      summary: 'PrimeChecker: {"number":"18446744073709551617"}',
      value: { number: '18446744073709551617' },
    },
  })
  assert.deepEqual(requestExamples('/algorithms/Adder/invoke'), {
    Adder: { summary: 'Adder: {"a":1,"b":2}', value: { a: 1, b: 2 } },
  })
})

test("POST /jobs shows every algorithm's examples by name, and each one is accepted", async () => {
  const examples = requestExamples('/jobs')
  assert.deepEqual(Object.keys(examples), [
    'Adder',
    'Graph',
    'Other',
    'PrimeChecker',
    'PrimeChecker-2',
    'Tree',
  ])
  assert.deepEqual(examples.Adder, {
    summary: 'Adder: {"a":1,"b":2}',
    value: { algorithm: 'Adder', params: { a: 1, b: 2 } },
  })
  for (const [name, example] of Object.entries(examples)) {
    assert.equal((await post('/jobs', example.value)).status, 202, name)
  }
})

const NAMES = ['Adder', 'Graph', 'Other', 'PrimeChecker', 'Tree']

test('the job, the job in a list and the webhook payload are a oneOf over the algorithms, discriminated', () => {
  const { schemas } = document.components
  for (const base of ['JobStatusResponse', 'JobListItem', 'WebhookPayload']) {
    const schema = schemas[base] as {
      oneOf: { $ref: string }[]
      discriminator: { propertyName: string; mapping: Schema }
    }
    assert.deepEqual(
      schema.oneOf.map((variant) => variant.$ref),
      NAMES.map((name) => `#/components/schemas/${name}.${base}`),
    )
    assert.equal(schema.discriminator.propertyName, 'algorithm')
    assert.equal(schema.discriminator.mapping.Adder, `#/components/schemas/Adder.${base}`)
  }
  // The POST /jobs body: a branch per algorithm, then one for any other name, which is no error of the
  // schema's (the service answers it 404): no discriminator, which would refuse that name.
  const request = schemas.JobRequest as { anyOf: Schema[]; discriminator?: unknown }
  assert.deepEqual(
    request.anyOf.slice(0, -1).map((variant) => variant.$ref),
    NAMES.map((name) => `#/components/schemas/${name}.JobRequest`),
  )
  assert.deepEqual(((request.anyOf.at(-1)?.properties ?? {}) as Schema).algorithm, {
    type: 'string',
    not: { enum: NAMES },
    description: 'Any other name: answered 404 ALGORITHM_NOT_FOUND, with the names served.',
  })
  assert.equal(request.discriminator, undefined)
  const adder = (schemas['Adder.JobRequest']?.properties ?? {}) as Schema
  assert.deepEqual(adder.algorithm, { type: 'string', const: 'Adder' })
  assert.deepEqual(adder.params, { $ref: '#/components/schemas/Adder.Params' })
  const job = (schemas['Other.JobStatusResponse']?.properties ?? {}) as Schema
  assert.deepEqual(job.result, { anyOf: [{ $ref: '#/components/schemas/Other.Result' }, { type: 'null' }] })
})

// A validating proxy holds each request to the document before the service sees it: what the document
// refuses, the service never answers.
test('a validating proxy passes a job of an unknown algorithm on to its 404, and holds known ones to their params', async () => {
  const validate = requestBodyValidator(document, '/jobs', 'post')
  const unknown = { algorithm: 'Sorter', params: { items: [3, 1, 2] } }
  assert.ok(validate(unknown), JSON.stringify(validate.errors))
  const answered = await post('/jobs', unknown)
  assert.equal(answered.status, 404)
  assert.equal(((await answered.json()) as { detail: { error: string } }).detail.error, 'ALGORITHM_NOT_FOUND')
  // Each algorithm's examples pass; params its own schema refuses do not, and the service refuses them too.
  for (const [name, example] of Object.entries(requestExamples('/jobs')))
    assert.ok(validate(example.value), `${name}: ${JSON.stringify(validate.errors)}`)
  for (const refused of [
    { algorithm: 'Adder', params: { a: 1, b: -1 } },
    { algorithm: 'Tree', params: { root: { label: 'a', children: [{ label: 7 }] } } },
  ]) {
    assert.equal(validate(refused), false, JSON.stringify(refused))
    assert.equal((await post('/jobs', refused)).status, 422, JSON.stringify(refused))
  }
})

// PrimeChecker reads its params itself, and its refusals are 400s (the interface's rule for a bad
// number in a job): the document holds its params to no schema, so that a proxy passes them on to that 400.
test('a validating proxy passes PrimeChecker params it reads itself on to their 400, on /jobs and its own route', async () => {
  const jobs = requestBodyValidator(document, '/jobs', 'post')
  const invoke = requestBodyValidator(document, '/algorithms/PrimeChecker/invoke', 'post')
  for (const params of [{}, { number: 1.5 }, { number: 'x' }, { number: true }]) {
    const job = { algorithm: 'PrimeChecker', params }
    assert.ok(jobs(job), `${JSON.stringify(job)}: ${JSON.stringify(jobs.errors)}`)
    assert.equal((await post('/jobs', job)).status, 400, JSON.stringify(job))
    assert.ok(invoke(params), `${JSON.stringify(params)}: ${JSON.stringify(invoke.errors)}`)
    assert.equal((await post('/algorithms/PrimeChecker/invoke', params)).status, 400, JSON.stringify(params))
  }
  // Not an object at all: the schema's refusal, on both sides.
  assert.equal(jobs({ algorithm: 'PrimeChecker', params: 97 }), false)
  assert.equal((await post('/jobs', { algorithm: 'PrimeChecker', params: 97 })).status, 422)
  // Its component still says what it reads.
  const params = document.components.schemas['PrimeChecker.Params'] as { required: string[] }
  assert.deepEqual(params.required, ['number'])
})

/** Every $ref of a value, with where it sits. */
function refsOf(value: unknown, at = '#'): [string, string][] {
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [[at, inner]] : refsOf(inner, `${at}/${key}`),
  )
}

/** What a pointer into the document ('#/components/...') leads to. */
const resolve = (pointer: string): unknown =>
  pointer
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], document)

test('schemas that refer to parts of themselves: components per referred schema, and every $ref resolves', () => {
  const dangling = refsOf(document).filter(([, ref]) => !ref.startsWith('#/') || resolve(ref) === undefined)
  assert.deepEqual(dangling, [])
  const at = (path: string) => resolve(`#/components/schemas/${path}`)
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
  // The same definition name in two algorithms, and in the params and result of one: separate components.
  assert.deepEqual(at('Tree.Params/properties/root'), ref('Tree.Params.Node'))
  assert.deepEqual(at('Tree.Params.Node/properties/children/items'), ref('Tree.Params.Node'))
  assert.deepEqual(at('Tree.Result/properties/deepest'), ref('Tree.Result.Node'))
  assert.deepEqual(at('Tree.Result.Node/required'), ['label', 'depth'])
  assert.deepEqual(at('Graph.Params'), ref('Graph.Params.Params'))
  assert.deepEqual(at('Graph.Params.Params/properties/edges/items'), ref('Graph.Params.Edge'))
  assert.deepEqual(at('Graph.Result/properties/next/items'), ref('Graph.Result'))
  assert.equal(at('Node'), undefined)
  assert.equal(at('Edge'), undefined)
})

test('those schemas still check params where the references lead, on invoke and on POST /jobs', async () => {
  const tree = (label: unknown) => ({
    root: { label: 'a', children: [{ label: 'b' }, { label: 'c', children: [{ label }] }] },
  })
  const invoked = await post('/algorithms/Tree/invoke', tree(7))
  assert.equal(invoked.status, 422)
  assert.deepEqual(
    ((await invoked.json()) as { detail: { loc: unknown[] }[] }).detail.map((problem) => problem.loc),
    [['body', 'root', 'children', 1, 'children', 0, 'label']],
  )
  const queued = await post('/jobs', { algorithm: 'Graph', params: { edges: [{ from: 'a' }] } })
  assert.equal(queued.status, 422)
  assert.deepEqual(
    ((await queued.json()) as { detail: { loc: unknown[] }[] }).detail.map((problem) => problem.loc),
    [['body', 'params', 'edges', 0, 'to']],
  )
  const answer = (await (await post('/algorithms/Tree/invoke', tree('e'))).json()) as { result: unknown }
  assert.deepEqual(answer.result, { count: 4, deepest: { label: 'e', depth: 2 } })
})
