// A job's result for a person, whatever its shape; PrimeChecker's in words.
import { element } from './dom.js'
import { inline, isRecord, isScalar, text } from './format.js'

/** PrimeChecker's result in words: "91 is not prime: 7 × 13". */
export function primeView(result) {
  if (!isRecord(result)) return valueView(result)
  const prime = result.is_prime === true
  const factors = Array.isArray(result.factors) ? result.factors.map(text) : []
  let sentence = `${text(result.number)} ${prime ? 'is prime' : 'is not prime'}`
  if (!prime && factors.length > 0) sentence += `: ${factors.join(' × ')}`
  if (result.factorization_complete === false) sentence += ' (incomplete: the budget ran out)'
  const rows = [element('p', { class: 'sentence', text: sentence })]
  if (result.algorithm !== undefined)
    rows.push(element('p', { class: 'muted', text: `Decided by ${text(result.algorithm)}.` }))
  return element('div', {}, rows)
}

/**
 * Any JSON value for a person: an object as its members, a list of objects as a table, a list of
 * scalars on one line, numbers with every digit.
 */
export function valueView(value) {
  if (isScalar(value) || (Array.isArray(value) && value.every(isScalar)))
    return element('span', {
      class: 'value',
      text: Array.isArray(value) && value.length === 0 ? '(empty list)' : inline(value),
    })
  if (Array.isArray(value)) {
    if (value.every(isRecord)) {
      const keys = [...new Set(value.flatMap((item) => Object.keys(item)))]
      return element('table', { class: 'value-table' }, [
        element('thead', {}, [
          element(
            'tr',
            {},
            keys.map((key) => element('th', { text: key })),
          ),
        ]),
        element(
          'tbody',
          {},
          value.map((item) =>
            element(
              'tr',
              {},
              keys.map((key) => element('td', {}, [key in item ? valueView(item[key]) : text(null)])),
            ),
          ),
        ),
      ])
    }
    return element(
      'ol',
      { class: 'value-list', start: '0' },
      value.map((item) => element('li', {}, [valueView(item)])),
    )
  }
  const entries = Object.entries(value)
  if (entries.length === 0) return element('span', { class: 'value', text: '{}' })
  return element(
    'dl',
    { class: 'fields value-fields' },
    entries.flatMap(([key, item]) => [element('dt', { text: key }), element('dd', {}, [valueView(item)])]),
  )
}
