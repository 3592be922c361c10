// A plain JavaScript algorithm: one module whose default export is a plain object, with no import of
// Algoserve's (docs/algorithms.md). Load it with
//
//   ALGOSERVE_ALGORITHMS=examples/algorithms/collatz.mjs npm start
//
// then `curl -s localhost:8000/algorithms/Collatz/invoke -H 'content-type: application/json' -d '{"n": 27}'`.
export default {
  name: 'Collatz',
  version: '1.0.0',
  description: 'Steps of the Collatz sequence from n down to 1, and the highest value it reaches.',
  params: {
    type: 'object',
    required: ['n'],
    additionalProperties: false,
    properties: { n: { type: 'integer', minimum: 1, description: 'Where the sequence starts.' } },
  },
  result: {
    type: 'object',
    required: ['steps', 'peak'],
    additionalProperties: false,
    properties: {
      steps: { type: 'integer', description: 'Steps to reach 1.' },
      peak: { type: 'integer', description: 'The highest value on the way, with every digit.' },
    },
  },
  examples: [{ params: { n: 27 } }],
  timeoutMs: 5000,
  run({ n }, { signal }) {
    // n is a number, or a BigInt when a double cannot hold it exactly; the walk is done in BigInt so
    // that 3n + 1 never loses a digit, and the peak is returned as a BigInt (written as an exact integer).
    let value = BigInt(n)
    let peak = value
    let steps = 0
    while (value !== 1n) {
      value = value % 2n === 0n ? value / 2n : 3n * value + 1n
      if (value > peak) peak = value
      steps++
      // A long walk (an n of thousands of digits) still stops when the call is given up.
      if (steps % 10_000 === 0) signal.throwIfAborted()
    }
    return { steps, peak }
  },
}
