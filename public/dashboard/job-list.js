// The job list (GET /jobs, newest first, a page at a time), its algorithm filter (GET /algorithms) and its
// version filter, which GET /jobs does not take: it keeps the jobs of that version on the page shown.
import { api } from './api.js'
import { $, badge, element, progressBar } from './dom.js'
import { duration, resultSummary, text, time, took } from './format.js'
import { openJob } from './job-panel.js'
import { showMessage } from './messages.js'
import { state } from './state.js'

const PAGE_SIZE = 20

export async function loadList() {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) })
  if (state.status) query.set('status', state.status)
  if (state.algorithm) query.set('algorithm', state.algorithm)
  const cursor = state.cursors[state.page]
  if (cursor) query.set('cursor', cursor)
  return api('GET', `/jobs?${query}`)
}

/** The state, and a running job's progress as the list tells it (refreshed with the list). */
function statusCell(job) {
  const cell = [badge(job.status)]
  if (job.status === 'running' && job.progress) {
    const bar = progressBar(`Progress of job ${job.job_id}`)
    bar.update(job.progress)
    cell.push(bar)
  }
  return cell
}

/** The version a job is pinned to, or that ran it; unknown (null) for a job whose record says neither. */
export const jobVersion = (job) => job.version ?? job.metadata?.version ?? null

export function renderList(body) {
  state.nextCursor = body.next_cursor
  const shown = state.version ? body.jobs.filter((job) => jobVersion(job) === state.version) : body.jobs
  const rows = shown.map((job) => {
    const open = element('button', {
      type: 'button',
      class: 'job-link',
      text: job.job_id,
      'aria-label': `Open job ${job.job_id}`,
    })
    const row = element('tr', { 'data-job-id': job.job_id }, [
      element('td', { 'data-label': 'Job' }, [open]),
      element('td', { 'data-label': 'Status' }, statusCell(job)),
      element('td', { 'data-label': 'Algorithm', text: text(job.algorithm) }),
      element('td', { 'data-label': 'Version', text: text(jobVersion(job)) }),
      element('td', { 'data-label': 'Result', text: resultSummary(job) }),
      element('td', { 'data-label': 'Created', text: time(job.created_at) }),
      element('td', { 'data-label': 'Took', text: duration(took(job)) }),
    ])
    if (job.job_id === state.openJob) row.classList.add('selected')
    row.addEventListener('click', () => openJob(job.job_id))
    return row
  })
  $('job-table')
    .querySelector('tbody')
    .replaceChildren(...rows)
  $('no-jobs').hidden = rows.length > 0
  const of = state.algorithm ? ` of ${state.algorithm}${state.version ? ` ${state.version}` : ''}` : ''
  $('no-jobs').textContent = state.status ? `No ${state.status} jobs${of}.` : `No jobs${of}.`
  $('newer').disabled = state.page === 0
  $('older').disabled = !state.nextCursor
  $('page-info').textContent = `Page ${state.page + 1}`
}

/** The algorithm filter's choices: every algorithm the service serves (GET /algorithms). */
export async function loadAlgorithms() {
  if (state.algorithmsLoaded) return
  const body = await api('GET', '/algorithms')
  const select = $('algorithm-filter')
  const options = body.algorithms.map((a) =>
    element('option', { value: a.name, text: `${a.name} ${a.version}`, title: text(a.description) }),
  )
  state.versions = new Map(body.algorithms.map((a) => [a.name, a.versions ?? []]))
  select.replaceChildren(element('option', { value: '', text: 'all' }), ...options)
  select.value = state.algorithm
  state.algorithmsLoaded = true
  fillVersions()
}

/** The version filter's choices: the versions of the algorithm picked, default and deprecated marked. */
export function fillVersions() {
  const select = $('version-filter')
  const versions = state.versions.get(state.algorithm) ?? []
  const options = versions.map((v) => {
    const marks = [v.default ? 'default' : '', v.deprecated ? 'deprecated' : ''].filter(Boolean)
    const label = marks.length > 0 ? `${v.version} (${marks.join(', ')})` : v.version
    return element('option', { value: v.version, text: label })
  })
  select.replaceChildren(element('option', { value: '', text: 'all' }), ...options)
  select.disabled = state.algorithm === ''
  select.value = state.version
}
export async function refreshList() {
  try {
    renderList(await loadList())
  } catch (error) {
    showMessage(`Job list (GET /jobs): ${error.message}`)
  }
}
