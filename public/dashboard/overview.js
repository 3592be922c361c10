// The overview, from the service's summary (GET /job-summary): counts by state, and charts of the jobs
// ended and their latency per minute, drawn in SVG.
import { $ } from './dom.js'
import { duration } from './format.js'

const STATUSES = ['pending', 'running', 'completed', 'failed']

export function renderOverview(summary) {
  const counts = summary.counts
  for (const status of STATUSES) $(`count-${status}`).textContent = String(counts[status])
  const total = STATUSES.reduce((sum, status) => sum + counts[status], 0)
  const kept = total === 1 ? 'the 1 job' : `all ${total} jobs`
  $('sample-note').textContent =
    total === 0 ? 'The service keeps no job yet.' : `Counted over ${kept} the service keeps.`

  // The service's minutes, oldest first (the last is the current one).
  const bounds = summary.latency_bounds_ms
  const buckets = summary.ended_per_minute.map((m) => ({
    minute: Math.floor(Date.parse(m.minute) / 60000),
    completed: m.completed,
    failed: m.failed,
    latency: m.latency_ms.buckets,
  }))
  drawThroughput(buckets)
  drawLatency(buckets, bounds)
  const completed = buckets.reduce((sum, bucket) => sum + bucket.completed, 0)
  const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0)
  const ended = completed + failed
  $('throughput-summary').textContent =
    `${ended} ended in ${buckets.length} min (${(ended / buckets.length).toFixed(1)}/min): ` +
    `${completed} completed, ${failed} failed or cancelled`
  const all = bounds.map(() => 0).concat(0)
  let sumMs = 0
  for (const m of summary.ended_per_minute) {
    m.latency_ms.buckets.forEach((n, i) => {
      all[i] += n
    })
    sumMs += m.latency_ms.sum
  }
  const timed = all.reduce((sum, n) => sum + n, 0)
  $('latency-summary').textContent =
    timed === 0
      ? 'No job ended in the window.'
      : `median ≈ ${duration(bucketQuantile(all, bounds, 0.5))}, ` +
        `p95 ≈ ${duration(bucketQuantile(all, bounds, 0.95))}, mean ${duration(sumMs / timed / 1000)}`
}

/**
 * The q-quantile, in s, of latencies counted in buckets (counts[i]: at most bounds[i] ms, above
 * bounds[i - 1]; the last count: above every bound), read linearly within its bucket; in the last,
 * which has no upper end, its lower end. Null when nothing is counted.
 */
function bucketQuantile(counts, bounds, q) {
  const total = counts.reduce((sum, n) => sum + n, 0)
  const rank = q * total
  let below = 0
  for (const [i, n] of counts.entries()) {
    if (n > 0 && below + n >= rank) {
      if (i === bounds.length) return bounds[i - 1] / 1000
      const low = i === 0 ? 0 : bounds[i - 1]
      return (low + (bounds[i] - low) * ((rank - below) / n)) / 1000
    }
    below += n
  }
  return null
}

const SVG = 'http://www.w3.org/2000/svg'
const CHART = { width: 400, height: 120, left: 40, right: 6, top: 8, bottom: 18 }

function svg(tag, attributes, label) {
  const node = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value))
  if (label !== undefined) node.textContent = label
  return node
}

/**
 * Axes, the top value (as `label` writes it) and minute labels; returns x of a bucket's left edge,
 * its width and y of a value.
 */
function frame(chart, buckets, top, label) {
  chart.replaceChildren()
  const plotWidth = CHART.width - CHART.left - CHART.right
  const plotHeight = CHART.height - CHART.top - CHART.bottom
  const slot = plotWidth / buckets.length
  const y = (value) => CHART.top + plotHeight - (top === 0 ? 0 : (value / top) * plotHeight)
  const base = CHART.top + plotHeight
  chart.append(
    svg('line', { class: 'axis', x1: CHART.left, y1: base, x2: CHART.width - CHART.right, y2: base }),
  )
  chart.append(svg('line', { class: 'axis', x1: CHART.left, y1: CHART.top, x2: CHART.left, y2: base }))
  chart.append(
    svg('text', { class: 'label', x: CHART.left - 3, y: CHART.top + 8, 'text-anchor': 'end' }, label(top)),
  )
  chart.append(svg('text', { class: 'label', x: CHART.left - 3, y: base, 'text-anchor': 'end' }, '0'))
  buckets.forEach((bucket, i) => {
    if (i % 5 !== 4 && i !== 0) return
    const label = new Date(bucket.minute * 60000).toISOString().slice(11, 16)
    // The last minute's label ends at the right edge instead of running past it.
    const last = i === buckets.length - 1
    const x = last ? CHART.width - CHART.right : CHART.left + (i + 0.5) * slot
    const anchor = last ? 'end' : 'middle'
    chart.append(svg('text', { class: 'label', x, y: CHART.height - 5, 'text-anchor': anchor }, label))
  })
  return { x: (i) => CHART.left + i * slot, slot, y, base }
}

/** The unit of a latency axis whose top is `seconds`, and a value in it: "2 ms", "500 ms", "5 s". */
const latencyUnit = (seconds) =>
  seconds < 1
    ? { name: 'ms', label: (value) => `${Number((value * 1000).toPrecision(2))} ms` }
    : { name: 's', label: (value) => `${value} s` }

/** A round number at or above `value`, for the top of an axis. */
function ceiling(value) {
  if (value <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power
  return 10 * power
}

function drawThroughput(buckets) {
  const chart = $('throughput-chart')
  const top = ceiling(Math.max(...buckets.map((b) => b.completed + b.failed)))
  const { x, slot, y, base } = frame(chart, buckets, top, String)
  buckets.forEach((bucket, i) => {
    const width = Math.max(1, slot - 2)
    const completedTop = y(bucket.completed)
    if (bucket.completed > 0) {
      chart.append(
        svg('rect', {
          class: 'bar-completed',
          x: x(i) + 1,
          y: completedTop,
          width,
          height: base - completedTop,
        }),
      )
    }
    if (bucket.failed > 0) {
      const failedTop = y(bucket.completed + bucket.failed)
      chart.append(
        svg('rect', {
          class: 'bar-failed',
          x: x(i) + 1,
          y: failedTop,
          width,
          height: completedTop - failedTop,
        }),
      )
    }
  })
  const title = svg('title', {}, 'Completed (green) and failed (red) jobs per minute')
  chart.prepend(title)
}

function drawLatency(buckets, bounds) {
  const chart = $('latency-chart')
  const medians = buckets.map((b) => bucketQuantile(b.latency, bounds, 0.5))
  const known = medians.filter((m) => m !== null)
  const top = ceiling(Math.max(0, ...known))
  // The caption names the unit the axis is labelled in.
  const unit = latencyUnit(top)
  $('latency-unit').textContent = unit.name
  const { x, slot, y } = frame(chart, buckets, top, unit.label)
  if (known.length === 0) {
    chart.append(
      svg(
        'text',
        { class: 'empty', x: CHART.width / 2, y: CHART.height / 2, 'text-anchor': 'middle' },
        'no job ended',
      ),
    )
    return
  }
  const points = []
  medians.forEach((median, i) => {
    if (median === null) return
    const px = x(i) + slot / 2
    points.push(`${px.toFixed(1)},${y(median).toFixed(1)}`)
    chart.append(svg('circle', { class: 'dot', cx: px.toFixed(1), cy: y(median).toFixed(1), r: 2.5 }))
  })
  if (points.length > 1) chart.prepend(svg('polyline', { class: 'line', points: points.join(' ') }))
}
