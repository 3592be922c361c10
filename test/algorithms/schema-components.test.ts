// A module's schema as OpenAPI components: every schema a reference names becomes a component under the
// module's prefix, every reference names one, and a reference that leaves the schema is refused.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Type } from '@sinclair/typebox'
import { schemaComponents } from '../../src/algorithms/schema-components.js'

test('a schema without references is one component, as written, without its $id and $schema', () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'Input',
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'integer', minimum: 0 } },
  }
  assert.deepEqual(schemaComponents(schema, 'X.Params'), {
    'X.Params': { type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 0 } } },
  })
})

test("'#/$defs/Name' and '#/definitions/Name' become components named after the definition", () => {
  const schema = {
    type: 'object',
    properties: { a: { $ref: '#/$defs/Point' }, b: { $ref: '#/definitions/Line' } },
    $defs: { Point: { type: 'object', properties: { x: { type: 'number' } } }, Unused: { type: 'string' } },
    definitions: { Line: { type: 'array', items: { $ref: '#/$defs/Point' }, minItems: 2 } },
  }
  assert.deepEqual(schemaComponents(schema, 'X.Params'), {
    'X.Params': {
      type: 'object',
      properties: { a: { $ref: 'X.Params.Point' }, b: { $ref: 'X.Params.Line' } },
    },
    'X.Params.Point': { type: 'object', properties: { x: { type: 'number' } } },
    'X.Params.Line': { type: 'array', items: { $ref: 'X.Params.Point' }, minItems: 2 },
  })
})

test("a reference to the root ('#', or its own $id: Type.Recursive) names the root's component", () => {
  const byHash = { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } } }
  assert.deepEqual(schemaComponents(byHash, 'X.Params'), {
    'X.Params': { type: 'object', properties: { kids: { type: 'array', items: { $ref: 'X.Params' } } } },
  })
  const recursive = Type.Recursive((This) => Type.Object({ name: Type.String(), next: Type.Array(This) }), {
    $id: 'Node',
  })
  assert.deepEqual(schemaComponents(recursive, 'X.Result'), {
    'X.Result': {
      type: 'object',
      required: ['name', 'next'],
      properties: { name: { type: 'string' }, next: { type: 'array', items: { $ref: 'X.Result' } } },
    },
  })
})

test("TypeBox's Type.Module: a root that is only a reference, and references by $id", () => {
  const module = Type.Module({
    Edge: Type.Object({ from: Type.String(), to: Type.String() }),
    Params: Type.Object({ edges: Type.Array(Type.Ref('Edge')) }),
  })
  assert.deepEqual(schemaComponents(module.Import('Params'), 'G.Params'), {
    'G.Params': { $ref: 'G.Params.Params' },
    'G.Params.Params': {
      type: 'object',
      required: ['edges'],
      properties: { edges: { type: 'array', items: { $ref: 'G.Params.Edge' } } },
    },
    'G.Params.Edge': {
      type: 'object',
      required: ['from', 'to'],
      properties: { from: { type: 'string' }, to: { type: 'string' } },
    },
  })
})

test('a schema with an $id written in place and referred to elsewhere is shown once, referred to in both places', () => {
  const point = Type.Object({ x: Type.Number() }, { $id: 'Point' })
  const schema = Type.Object({ a: point, b: Type.Ref('Point') })
  assert.deepEqual(schemaComponents(schema, 'X.Result'), {
    'X.Result': {
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { $ref: 'X.Result.Point' }, b: { $ref: 'X.Result.Point' } },
    },
    'X.Result.Point': { type: 'object', required: ['x'], properties: { x: { type: 'number' } } },
  })
})

test('pointers into the schema, anchors, and names that need escaping or clash', () => {
  const schema = {
    type: 'object',
    properties: {
      a: { $ref: '#/properties/b' },
      b: { type: 'string' },
      c: { $ref: '#here' },
      d: { $id: '#here', type: 'boolean' },
      e: { $ref: '#/$defs/a~1b%20c' },
      f: { $ref: '#/$defs/here' },
    },
    $defs: { 'a/b c': { type: 'null' }, here: { type: 'integer' } },
  }
  assert.deepEqual(schemaComponents(schema, 'X.Params'), {
    'X.Params': {
      type: 'object',
      properties: {
        a: { $ref: 'X.Params.properties.b' },
        b: { $ref: 'X.Params.properties.b' },
        c: { $ref: 'X.Params.here' },
        d: { $ref: 'X.Params.here' },
        e: { $ref: 'X.Params.a_b_c' },
        f: { $ref: 'X.Params.here-2' },
      },
    },
    'X.Params.properties.b': { type: 'string' },
    'X.Params.here': { type: 'boolean' },
    'X.Params.a_b_c': { type: 'null' },
    'X.Params.here-2': { type: 'integer' },
  })
})

test('a reference that leaves the schema, or names nothing in it, is refused with the reference named', () => {
  for (const ref of [
    'http://json-schema.org/draft-07/schema#',
    'other.json',
    '#/$defs/Missing',
    '#nowhere',
  ]) {
    const schema = { type: 'object', properties: { a: { $ref: ref } }, $defs: { Here: { type: 'string' } } }
    assert.throws(
      () => schemaComponents(schema, 'X.Params'),
      (error: Error) => error.message.startsWith(`$ref '${ref}' names no part of the schema`),
      ref,
    )
  }
})

test("the module's schema is left as it was", () => {
  const schema = {
    type: 'object',
    properties: { a: { $ref: '#/$defs/A' } },
    $defs: { A: { type: 'string' } },
  }
  const before = structuredClone(schema)
  const components = schemaComponents(schema, 'X.Params')
  ;(components['X.Params.A'] as { type: string }).type = 'integer'
  assert.deepEqual(schema, before)
})
