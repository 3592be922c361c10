// What the client prints for people, from bodies as the service sends them: the next page's command.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatList } from '../../src/client/format.js'

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
})
