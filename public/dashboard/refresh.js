// Reading everything the page shows again: on a timer, a click, a new key, a cancel or a job's end.
import { api } from './api.js'
import { $ } from './dom.js'
import { time } from './format.js'
import { loadAlgorithms, loadList, renderList } from './job-list.js'
import { refreshDetail } from './job-panel.js'
import { clearMessage, showMessage } from './messages.js'
import { renderOverview } from './overview.js'

/** Reads everything once; the message shows the first thing that failed, or goes. */
async function refreshOnce() {
  const labelled = (what, promise) =>
    promise.catch((error) => {
      throw new Error(`${what}: ${error.message}`)
    })
  const results = await Promise.allSettled([
    labelled('Algorithms (GET /algorithms)', loadAlgorithms()),
    labelled('Overview (GET /job-summary)', api('GET', '/job-summary').then(renderOverview)),
    labelled('Job list (GET /jobs)', loadList().then(renderList)),
    refreshDetail(),
  ])
  const failure = results.find((r) => r.status === 'rejected')
  if (failure) showMessage(failure.reason.message)
  else clearMessage()
  $('updated').textContent = `Updated ${time(new Date().toISOString())} UTC`
}

// One refresh at a time; one asked for meanwhile (a cancel, a click) runs right after it.
let inFlight = null
let again = false
export function refresh() {
  if (inFlight) {
    again = true
    return inFlight
  }
  inFlight = (async () => {
    do {
      again = false
      await refreshOnce()
    } while (again)
  })().finally(() => {
    inFlight = null
  })
  return inFlight
}
