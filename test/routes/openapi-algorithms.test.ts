// The OpenAPI document with user algorithms loaded: each one's params and result as named components
// that cannot clash, an invoke operation per algorithm whose example succeeds, and the POST /jobs body
// and the job's result as a oneOf discriminated by `algorithm`.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'

const modules = writeModules({
  // Both call their params type Input, as TypeBox users may.
  'adder.mjs': moduleSource(
    validMembers('Adder').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
  ),
  'other.mjs': moduleSource(
    validMembers('Other').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
  ),
})

type Schema = Record<string, unknown>
let server: TestApp
let document: {
  paths: Record<
    string,
    Record<string, { operationId: string; requestBody?: { content: Record<string, { example: unknown }> } }>
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

test('an invoke operation per algorithm, whose request example succeeds', async () => {
  for (const name of ['Adder', 'Other', 'PrimeChecker']) {
    const operation = document.paths[`/algorithms/${name}/invoke`]?.post
    assert.equal(operation?.operationId, `invoke_${name}`)
    const example = operation?.requestBody?.content['application/json']?.example
    assert.notEqual(example, undefined, name)
    const response = await fetch(`${server.url}/algorithms/${name}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(example),
    })
    assert.equal(response.status, 200, name)
  }
})

test('the POST /jobs body and the job are a oneOf over the algorithms, discriminated by algorithm', () => {
  const { schemas } = document.components
  for (const base of ['JobRequest', 'JobStatusResponse']) {
    const schema = schemas[base] as {
      oneOf: { $ref: string }[]
      discriminator: { propertyName: string; mapping: Schema }
    }
    assert.deepEqual(
      schema.oneOf.map((variant) => variant.$ref),
      ['Adder', 'Other', 'PrimeChecker'].map((name) => `#/components/schemas/${name}.${base}`),
    )
    assert.equal(schema.discriminator.propertyName, 'algorithm')
    assert.equal(schema.discriminator.mapping.Adder, `#/components/schemas/Adder.${base}`)
  }
  const request = (schemas['Adder.JobRequest']?.properties ?? {}) as Schema
  assert.deepEqual(request.algorithm, { type: 'string', const: 'Adder' })
  assert.deepEqual(request.params, { $ref: '#/components/schemas/Adder.Params' })
  const job = (schemas['Other.JobStatusResponse']?.properties ?? {}) as Schema
  assert.deepEqual(job.result, { anyOf: [{ $ref: '#/components/schemas/Other.Result' }, { type: 'null' }] })
})
