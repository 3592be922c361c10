// A TypeScript algorithm: its schemas written with TypeBox (whose output is JSON Schema), its types
// derived from them, and `defineAlgorithm` checking the module's shape at compile time (it does
// nothing at run time). Algoserve loads JavaScript, so this is compiled first:
//
//   npm run build:examples      # examples/algorithms/typescript/dist/word-count.js
//   ALGOSERVE_ALGORITHMS=examples/algorithms/typescript/dist npm start
import { type Static, Type } from '@sinclair/typebox'
import { defineAlgorithm } from 'algoserve'

const Params = Type.Object(
  {
    text: Type.String({ maxLength: 100_000, description: 'The text to count the words of.' }),
    top: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 50, default: 3, description: 'How many of the most used words.' }),
    ),
  },
  { additionalProperties: false },
)

const WordCount = Type.Object({ word: Type.String(), count: Type.Integer() }, { additionalProperties: false })

const Result = Type.Object(
  {
    words: Type.Integer({ description: 'Words in the text.' }),
    distinct: Type.Integer({ description: 'Different words, ignoring case.' }),
    top: Type.Array(WordCount, { description: 'The most used words, most used first.' }),
  },
  { additionalProperties: false },
)

export default defineAlgorithm({
  name: 'WordCount',
  version: '1.0.0',
  description: 'Counts the words of a text and names the most used ones.',
  params: Params,
  result: Result,
  examples: [{ params: { text: 'the cat and the hat', top: 2 } }],
  timeoutMs: 2000,
  run(params: Static<typeof Params>): Static<typeof Result> {
    const words = params.text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []
    const counts = new Map<string, number>()
    for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1)
    // Most used first; words used as often in alphabetical order, so that the answer is stable.
    const top = [...counts]
      .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1))
      .slice(0, params.top ?? 3)
      .map(([word, count]) => ({ word, count }))
    return { words: words.length, distinct: counts.size, top }
  },
})
