// The lanes: turns between /invoke and jobs, and in the job lane turns between algorithms, first in
// first out within each; a run that leaves (aborted) gives up its place.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ServiceUnavailableError } from '../../src/errors.js'
import { Lanes } from '../../src/execution/lanes.js'

/**
 * Queues runs as `lane:algorithm:n` and hands over as many values as wait; returns who got them, in order.
 */
async function served(lanes: Lanes<number>, runs: [lane: 'invoke' | 'job', algorithm: string][]) {
  const order: string[] = []
  const counts = new Map<string, number>()
  const waits = runs.map(([lane, algorithm]) => {
    const n = (counts.get(`${lane}:${algorithm}`) ?? 0) + 1
    counts.set(`${lane}:${algorithm}`, n)
    return lanes.wait(lane, algorithm).then(() => order.push(`${lane}:${algorithm}:${n}`))
  })
  while (lanes.handOver(0)) await Promise.resolve()
  await Promise.all(waits)
  return order
}

describe('Lanes', () => {
  it('serves the algorithms of the job lane in turns, first in first out within each', async () => {
    const lanes = new Lanes<number>(Number.POSITIVE_INFINITY, 'thread')
    const order = await served(lanes, [
      ['job', 'slow'],
      ['job', 'slow'],
      ['job', 'slow'],
      ['job', 'slow'],
      ['job', 'fast'],
      ['job', 'fast'],
      ['job', 'other'],
    ])
    assert.deepEqual(order, [
      'job:slow:1',
      'job:fast:1',
      'job:other:1',
      'job:slow:2',
      'job:fast:2',
      'job:slow:3',
      'job:slow:4',
    ])
    assert.equal(lanes.waiting, 0)
  })

  it('keeps the invoke lane first in first out, taking turns with the job lane', async () => {
    const lanes = new Lanes<number>(Number.POSITIVE_INFINITY, 'thread')
    const order = await served(lanes, [
      ['job', 'slow'],
      ['job', 'slow'],
      ['invoke', 'slow'],
      ['invoke', 'fast'],
      ['job', 'fast'],
    ])
    assert.deepEqual(order, ['invoke:slow:1', 'job:slow:1', 'invoke:fast:1', 'job:fast:1', 'job:slow:2'])
  })

  it('drops an aborted run from its algorithm’s line', async () => {
    const lanes = new Lanes<string>(Number.POSITIVE_INFINITY, 'thread')
    const abort = new AbortController()
    const gone = lanes.wait('job', 'slow', abort.signal)
    const fast = lanes.wait('job', 'fast')
    assert.equal(lanes.waiting, 2)
    abort.abort(new Error('cancelled'))
    await assert.rejects(gone, /cancelled/)
    assert.equal(lanes.waiting, 1)
    assert.equal(lanes.handOver('thread'), true)
    assert.equal(await fast, 'thread')
    assert.equal(lanes.handOver('thread'), false)
  })

  it('puts a run given back at the head of its line, with no bound on its wait', async () => {
    const lanes = new Lanes<string>(20, 'thread')
    const order: string[] = []
    const left: string[] = []
    const enter = (name: string, lane: 'invoke' | 'job', first: boolean) =>
      lanes.enter(
        lane,
        'any',
        () => order.push(name),
        () => left.push(name),
        undefined,
        first,
      )
    enter('job waiting', 'job', false)
    enter('job given back', 'job', true)
    enter('invoke waiting', 'invoke', false)
    enter('invoke given back', 'invoke', true)
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.deepEqual(left, ['invoke waiting'], 'only the /invoke run that had not waited got its 503')
    while (lanes.handOver('thread')) {}
    assert.deepEqual(order, ['invoke given back', 'job given back', 'job waiting'])
  })

  it('gives an /invoke run a 503 after its bound', async () => {
    const lanes = new Lanes<number>(20, 'thread')
    await assert.rejects(lanes.wait('invoke', 'any'), ServiceUnavailableError)
    assert.equal(lanes.waiting, 0)
  })
})
