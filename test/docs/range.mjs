// The module of docs/algorithms.md's "Refusing params": params that pass the schema and make no sense
// refused with an error of the name InvalidParamsError, no import of Algoserve's.
export default {
  name: 'Range',
  version: '1.0.0',
  description: 'The integers from `from` to `to`.',
  params: {
    type: 'object',
    required: ['from', 'to'],
    properties: { from: { type: 'integer' }, to: { type: 'integer' } },
  },
  result: { type: 'object', properties: { count: { type: 'integer' } } },
  run(params) {
    if (params.to < params.from) {
      throw Object.assign(new Error('to must not come before from'), {
        name: 'InvalidParamsError',
        field: 'to',
      })
    }
    return { count: params.to - params.from + 1 }
  },
}
