// The open job (GET /jobs/{id}?include=params, GET /jobs/{id}/deliveries), named in the address as
// #job=<id>, and its live progress (GET /jobs/{id}/events).
import { api, headersFor, jobPath } from './api.js'
import { $, badge, element, progressBar } from './dom.js'
import { streamEvents } from './event-stream.js'
import { duration, isPrimeChecker, ms, parse, stringify, text, time } from './format.js'
import { showMessage } from './messages.js'
import { refresh } from './refresh.js'
import { primeView, valueView } from './result-view.js'
import { state } from './state.js'

export function openJob(id) {
  if (following && following.id !== id) stopFollowing()
  if (location.hash !== `#job=${id}`) history.pushState(null, '', `#job=${encodeURIComponent(id)}`)
  state.openJob = id
  for (const row of document.querySelectorAll('#job-table tbody tr')) {
    row.classList.toggle('selected', row.dataset.jobId === id)
  }
  $('detail').hidden = false
  refreshDetail()
    .then(() => {
      // Narrow screens show the job above the list, out of view once the list is scrolled; scrolled
      // to once filled, since the browser keeps the list still while the job above it grows.
      if (state.openJob === id && matchMedia('(max-width: 959px)').matches) {
        $('detail').scrollIntoView({ block: 'start' })
      }
    })
    .catch((error) => showMessage(error.message))
}

export function closeJob() {
  stopFollowing()
  state.openJob = null
  $('detail').hidden = true
  if (location.hash) history.pushState(null, '', location.pathname + location.search)
  for (const row of document.querySelectorAll('#job-table tbody tr.selected'))
    row.classList.remove('selected')
}

/** The params of the job last read with them: { id, params }. */
let shownParams = { id: null, params: null }

export function renderJob(job) {
  $('detail-id').textContent = job.job_id
  const started = ms(job.started_at)
  const created = ms(job.created_at)
  const end = ms(job.completed_at)
  const fields = [
    ['Status', badge(job.status)],
    ['Algorithm', text(job.algorithm)],
    ['Version', text(job.version ?? job.metadata?.version)],
    ['Created', text(job.created_at)],
    ['Started', text(job.started_at)],
    ['Ended', text(job.completed_at)],
    ['Waited', duration(started !== null && created !== null ? (started - created) / 1000 : null)],
    ['Ran', duration(started !== null && end !== null ? (end - started) / 1000 : null)],
    ['Error', text(job.error)],
  ]
  if (job.metadata) fields.push(['Metadata', stringify(job.metadata)])
  $('detail-fields').replaceChildren(
    ...fields.flatMap(([label, value]) => [element('dt', { text: label }), element('dd', {}, [value])]),
  )
  // Its params come with the reads of the job (?include=params); the end event and a cancel's answer
  // carry none, so the last ones read for this job stay.
  if (job.params !== undefined) shownParams = { id: job.job_id, params: job.params }
  $('detail-params').textContent =
    shownParams.id === job.job_id ? stringify(shownParams.params, null, 2) : '—'
  const hasResult = job.result !== null && job.result !== undefined
  $('detail-result-view').replaceChildren(
    hasResult ? (isPrimeChecker(job) ? primeView(job.result) : valueView(job.result)) : text(null),
  )
  $('detail-result').textContent = hasResult ? stringify(job.result, null, 2) : '—'
  const going = job.status === 'pending' || job.status === 'running'
  $('cancel-job').disabled = !going
  // An end seen first by another read (a cancel, a refresh) leaves the stream be: its own end event
  // follows at once and closes it.
  if (going) follow(job.job_id)
  else $('detail-progress').hidden = true
}

// ---- the open job's live progress: GET /jobs/{id}/events -----------------------------------------

/** The stream followed: { id, controller }, or null. */
let following = null
/** Between a stream that was cut and the next (the service's own `retry:`). */
const RECONNECT_MS = 1000
const detailBar = progressBar('Progress of the job')
$('detail-progress-bar').replaceChildren(detailBar)

function stopFollowing() {
  if (following) following.controller.abort()
  following = null
}

/** The open job's progress; none shown until the run tells one (not every algorithm does). */
function showProgress(progress) {
  $('detail-progress').hidden = progress === null
  if (progress === null) return
  $('detail-progress-state').textContent = progress.message ? text(progress.message) : ''
  detailBar.update(progress)
}

/**
 * Reads the job's event stream with fetch, not EventSource: with API keys on, the key goes in a header,
 * which EventSource cannot send. A cut stream is opened again with the last event's id; the stream
 * ends with the job (its end event is the job, shown at once) or when the job is closed. Refused (a
 * 401, a 503 when the service holds no more streams), it stops; the next refresh, still seeing the job
 * going, follows it again.
 */
function follow(id) {
  if (following && following.id === id) return
  stopFollowing()
  // Another job's progress is not shown meanwhile: the stream's first event shows this one's.
  $('detail-progress').hidden = true
  const controller = new AbortController()
  following = { id, controller }
  const current = () => following !== null && following.controller === controller
  let lastEventId = ''
  ;(async () => {
    while (current()) {
      try {
        const headers = headersFor('text/event-stream')
        if (lastEventId) headers['last-event-id'] = lastEventId
        const response = await fetch(`${jobPath(id)}/events`, {
          headers,
          cache: 'no-store',
          signal: controller.signal,
        })
        // 204: the end was seen already; the job as it is now.
        if (response.status === 204) break
        if (!response.ok || !response.body) {
          await response.body?.cancel()
          if (current()) following = null
          return
        }
        let ended = false
        for await (const event of streamEvents(response.body)) {
          // After the end, the service closes the stream: read to its close rather than cut it.
          if (ended) continue
          if (!current()) return
          lastEventId = event.id
          if (event.event === 'end') {
            ended = true
            following = null
            renderJob(parse(event.data))
            refresh()
            continue
          }
          const data = JSON.parse(event.data)
          // A start (or a run given back) starts the progress again.
          if (event.event === 'state') showProgress(null)
          else if (event.event === 'progress') showProgress(data)
        }
        if (ended) return
      } catch {
        if (!current()) return
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS))
    }
    if (current()) {
      following = null
      refreshDetail().catch((error) => showMessage(error.message))
    }
  })()
}

function renderDeliveries(body) {
  const states = {
    none: 'No webhook for this job.',
    waiting: 'Waiting: the job has not ended, or the first attempt is under way.',
    retrying: 'Retrying: an attempt failed and another is scheduled.',
    delivered: 'Delivered.',
    failed: 'Failed: the service gave up.',
  }
  $('delivery-state').textContent = `${states[body.state] || body.state}${body.url ? ` (${body.url})` : ''}`
  const rows = body.attempts.map((a) =>
    element('tr', {}, [
      element('td', { 'data-label': '#', text: text(a.attempt) }),
      element('td', { 'data-label': 'At', text: time(a.at) }),
      element('td', { 'data-label': 'Took', text: `${text(a.duration_ms)} ms` }),
      element('td', { 'data-label': 'HTTP', text: text(a.status_code) }),
      element('td', { 'data-label': 'Error', text: text(a.error) }),
      element('td', { 'data-label': 'Next attempt', text: time(a.next_attempt_at) }),
    ]),
  )
  $('delivery-table')
    .querySelector('tbody')
    .replaceChildren(...rows)
  $('delivery-table').hidden = rows.length === 0
}

export async function refreshDetail() {
  const id = state.openJob
  if (id === null) return
  const [job, deliveries] = await Promise.all([
    api('GET', `${jobPath(id)}?include=params`).catch((error) => {
      throw new Error(`Job ${id}: ${error.message}`)
    }),
    api('GET', `${jobPath(id)}/deliveries`).catch((error) => error),
  ])
  if (state.openJob !== id) return
  renderJob(job)
  if (deliveries instanceof Error) {
    $('delivery-state').textContent = `Delivery history unavailable: ${deliveries.message}`
    $('delivery-table').hidden = true
  } else renderDeliveries(deliveries)
}

export function jobFromHash() {
  const match = /^#job=(.+)$/.exec(location.hash)
  return match ? decodeURIComponent(match[1]) : null
}
