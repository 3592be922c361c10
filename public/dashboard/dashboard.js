// The job dashboard (/dashboard): plain browser JavaScript in ES modules, no framework, served by the
// service with lossless-json (global LosslessJSON), so a 600-digit number or factor shows with every
// digit. This module wires the page's controls to the modules that do the work:
//
//   api.js           the service's JSON API, with the API key the user gave
//   overview.js      counts and charts from GET /job-summary
//   job-list.js      GET /jobs, a page at a time, the algorithm filter (GET /algorithms) and the version filter
//   job-panel.js     the open job, its webhook deliveries and its live progress
//   event-stream.js  the reader of GET /jobs/{id}/events
//   result-view.js   a result for a person, member by member; PrimeChecker's in words
//   refresh.js       reading it all again, one refresh at a time
//   format.js, dom.js, messages.js, state.js: what they share
//
// Data: GET /job-summary (the overview: counts by state, ends and latency per minute, kept by the
// service over every job, so exact however many there are), GET /algorithms (the algorithm filter),
// GET /jobs (list, newest first, with a running job's progress), GET /jobs/{id}, GET /jobs/{id}/events
// (the open job's live progress), GET /jobs/{id}/deliveries and POST /jobs/{id}/cancel.
import { api, apiKey, jobPath, KEY_STORAGE } from './api.js'
import { $ } from './dom.js'
import { fillVersions, refreshList } from './job-list.js'
import { closeJob, jobFromHash, openJob, renderJob } from './job-panel.js'
import { clearMessage, showMessage } from './messages.js'
import { refresh } from './refresh.js'
import { state } from './state.js'

const REFRESH_MS = 5000

$('key-button').addEventListener('click', () => {
  const form = $('key-form')
  form.hidden = !form.hidden
  $('key-reason').textContent = apiKey() ? 'A key is set for this tab.' : 'Set the key this service expects.'
  if (!form.hidden) $('key-input').focus()
})
$('key-form').addEventListener('submit', (event) => {
  event.preventDefault()
  const key = $('key-input').value.trim()
  if (key) sessionStorage.setItem(KEY_STORAGE, key)
  $('key-input').value = ''
  $('key-form').hidden = true
  refresh()
})
$('key-forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE)
  $('key-input').value = ''
  refresh()
})
$('status-filter').addEventListener('change', (event) => {
  state.status = event.target.value
  state.cursors = [null]
  state.page = 0
  refreshList()
})
$('algorithm-filter').addEventListener('change', (event) => {
  state.algorithm = event.target.value
  state.version = ''
  fillVersions()
  state.cursors = [null]
  state.page = 0
  refreshList()
})
$('version-filter').addEventListener('change', (event) => {
  state.version = event.target.value
  refreshList()
})

$('older').addEventListener('click', () => {
  if (!state.nextCursor) return
  state.cursors[state.page + 1] = state.nextCursor
  state.page++
  refreshList()
})
$('newer').addEventListener('click', () => {
  if (state.page === 0) return
  state.page--
  refreshList()
})

$('close-detail').addEventListener('click', closeJob)
$('cancel-job').addEventListener('click', async () => {
  const id = state.openJob
  if (id === null) return
  // A cancel cannot be undone: the job fails, and a running one loses its work.
  if (!confirm(`Cancel job ${id}? It will fail with "The job was cancelled."; this cannot be undone.`)) return
  $('cancel-job').disabled = true
  try {
    renderJob(await api('POST', `${jobPath(id)}/cancel`))
    clearMessage()
  } catch (error) {
    showMessage(`Cancel ${id}: ${error.message}`)
  }
  await refresh()
})

// Back, forward, or an address edited by hand (pushState itself fires nothing).
window.addEventListener('hashchange', () => {
  const id = jobFromHash()
  if (id === null) closeJob()
  else openJob(id)
})

$('refresh-now').addEventListener('click', refresh)
setInterval(() => {
  if ($('auto-refresh').checked && document.visibilityState === 'visible') refresh()
}, REFRESH_MS)

const initial = jobFromHash()
if (initial !== null) openJob(initial)
refresh()
