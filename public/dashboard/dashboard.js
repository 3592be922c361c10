// The job dashboard (/dashboard): plain browser JavaScript, no framework, served by the service with
// lossless-json (global LosslessJSON), so a 600-digit number or factor shows with every digit.
//
// Data: GET /job-summary (the overview: counts by state, ends and latency per minute, kept by the
// service over every job, so exact however many there are), GET /algorithms (the algorithm filter),
// GET /jobs (list, newest first, with a running job's progress), GET /jobs/{id}, GET /jobs/{id}/events
// (the open job's live progress), GET /jobs/{id}/deliveries and POST /jobs/{id}/cancel.
// Jobs of any algorithm: a result is shown member by member whatever its shape; PrimeChecker's in words.
;(() => {
  const { parse, stringify, isLosslessNumber } = globalThis.LosslessJSON
  const REFRESH_MS = 5000
  const PAGE_SIZE = 20
  const KEY_STORAGE = 'algoserve-api-key'
  const STATUSES = ['pending', 'running', 'completed', 'failed']
  const PRIME_CHECKER = 'PrimeChecker'

  const $ = (id) => document.getElementById(id)
  const state = {
    status: '',
    algorithm: '',
    /** The algorithm filter's choices are read once, when the service first lists them. */
    algorithmsLoaded: false,
    /** The cursor of each page seen so far: [null, cursor of page 2, ...]. */
    cursors: [null],
    page: 0,
    nextCursor: null,
    openJob: null,
  }

  // ---- talking to the service -------------------------------------------------------------------

  class HttpError extends Error {
    constructor(status, body, text) {
      super(describeError(status, body, text))
      this.status = status
    }
  }

  function describeError(status, body, text) {
    const detail = body && typeof body === 'object' ? body.detail : undefined
    const error = detail && typeof detail === 'object' && !Array.isArray(detail) ? detail : body
    if (error && typeof error === 'object' && 'error' in error)
      return `${status} ${error.error}: ${error.message}`
    if (Array.isArray(detail))
      return `${status} ${detail.map((p) => `${(p.loc || []).join('.')}: ${p.msg}`).join('; ')}`
    if (typeof detail === 'string') return `${status} ${detail}`
    return `${status} ${String(text).slice(0, 200)}`
  }

  const apiKey = () => sessionStorage.getItem(KEY_STORAGE)

  function headersFor(accept) {
    const headers = { accept }
    const key = apiKey()
    if (key) headers.authorization = `Bearer ${key}`
    return headers
  }

  async function api(method, path) {
    const key = apiKey()
    const headers = headersFor('application/json')
    const response = await fetch(path, { method, headers, cache: 'no-store' })
    const text = await response.text()
    let body
    try {
      body = parse(text)
    } catch {
      body = undefined
    }
    if (!response.ok) {
      if (response.status === 401)
        askForKey(key ? 'The API key was not accepted.' : 'This service needs an API key.')
      throw new HttpError(response.status, body, text)
    }
    return body
  }

  const jobPath = (id) => `/jobs/${encodeURIComponent(id)}`

  // ---- formatting --------------------------------------------------------------------------------

  const text = (value) => (value === null || value === undefined ? '—' : String(value))
  const ms = (iso) => (iso ? Date.parse(iso) : null)
  /** "2026-11-23 19:20:01" (UTC) from the service's ISO time. */
  const time = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—')
  function duration(seconds) {
    if (seconds === null || !Number.isFinite(seconds)) return '—'
    if (seconds < 1) return `${Math.round(seconds * 1000)} ms`
    if (seconds < 120) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`
    return `${(seconds / 60).toFixed(1)} min`
  }
  const took = (job) => {
    const start = ms(job.created_at)
    const end = ms(job.completed_at)
    return start !== null && end !== null ? (end - start) / 1000 : null
  }
  /** A long number cut for a table cell; the job's detail shows it whole. */
  function shortNumber(value) {
    const digits = text(value)
    return digits.length > 20 ? `${digits.slice(0, 10)}…(${digits.replace('-', '').length} digits)` : digits
  }
  const isPrimeChecker = (job) => job.algorithm === PRIME_CHECKER
  const numberOf = (job) =>
    isPrimeChecker(job) && job.result && typeof job.result === 'object' ? job.result.number : undefined
  const isScalar = (value) => value === null || typeof value !== 'object' || isLosslessNumber(value)
  const isRecord = (value) => !isScalar(value) && !Array.isArray(value)

  /** A value on one line: scalars as they are, a list of scalars comma-separated, the rest as JSON. */
  function inline(value) {
    if (isScalar(value)) return text(value)
    if (Array.isArray(value) && value.every(isScalar)) return value.map(text).join(', ')
    return stringify(value)
  }

  /** A result in a table cell: PrimeChecker's number; any other result's members on one line, cut. */
  function resultSummary(job) {
    if (job.result === null || job.result === undefined) return '—'
    if (isPrimeChecker(job)) return shortNumber(numberOf(job))
    const line = isRecord(job.result)
      ? Object.entries(job.result)
          .map(([key, value]) => `${key}: ${inline(value)}`)
          .join(', ')
      : inline(job.result)
    return line.length > 60 ? `${line.slice(0, 59)}…` : line
  }

  function element(tag, attributes = {}, children = []) {
    const node = document.createElement(tag)
    for (const [name, value] of Object.entries(attributes)) {
      if (name === 'text') node.textContent = value
      else node.setAttribute(name, value)
    }
    for (const child of children) node.append(child)
    return node
  }

  function badge(status) {
    return element('span', { class: `badge ${status}`, text: status })
  }

  /** Whole percents, rounded down: 100% only once the run says it has done everything. */
  const percent = (fraction) => Math.floor(Math.min(1, Math.max(0, Number(fraction) || 0)) * 100)

  /**
   * A progress bar (role=progressbar, 0 to 100) with its percentage beside it; the message is its title
   * and part of what a screen reader says. `update` sets it again.
   */
  function progressBar(label) {
    const fill = element('span', { class: 'progress-fill' })
    const bar = element(
      'span',
      {
        class: 'progress-bar',
        role: 'progressbar',
        'aria-label': label,
        'aria-valuemin': '0',
        'aria-valuemax': '100',
      },
      [fill],
    )
    const value = element('span', { class: 'progress-value' })
    const node = element('span', { class: 'progress' }, [bar, value])
    node.update = (progress) => {
      const now = percent(progress.progress)
      const message =
        progress.message === null || progress.message === undefined ? '' : String(progress.message)
      bar.setAttribute('aria-valuenow', String(now))
      bar.setAttribute('aria-valuetext', message ? `${now}%: ${message}` : `${now}%`)
      // Through the CSSOM: the page's policy forbids style attributes.
      fill.style.width = `${now}%`
      value.textContent = `${now}%`
      if (message) node.title = message
      else node.removeAttribute('title')
    }
    return node
  }

  // ---- messages and the API key -----------------------------------------------------------------

  function showMessage(message) {
    $('message').textContent = message
    $('message').hidden = false
  }
  const clearMessage = () => {
    $('message').hidden = true
  }

  function askForKey(reason) {
    $('key-reason').textContent = reason
    $('key-form').hidden = false
  }

  $('key-button').addEventListener('click', () => {
    const form = $('key-form')
    form.hidden = !form.hidden
    $('key-reason').textContent = apiKey()
      ? 'A key is set for this tab.'
      : 'Set the key this service expects.'
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

  // ---- overview: counts, throughput and latency from the service's summary ------------------------

  function renderOverview(summary) {
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

  // ---- the job list ----------------------------------------------------------------------------

  async function loadList() {
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

  function renderList(body) {
    state.nextCursor = body.next_cursor
    const rows = body.jobs.map((job) => {
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
    const of = state.algorithm ? ` of ${state.algorithm}` : ''
    $('no-jobs').textContent = state.status ? `No ${state.status} jobs${of}.` : `No jobs${of}.`
    $('newer').disabled = state.page === 0
    $('older').disabled = !state.nextCursor
    $('page-info').textContent = `Page ${state.page + 1}`
  }

  $('status-filter').addEventListener('change', (event) => {
    state.status = event.target.value
    state.cursors = [null]
    state.page = 0
    refreshList()
  })
  $('algorithm-filter').addEventListener('change', (event) => {
    state.algorithm = event.target.value
    state.cursors = [null]
    state.page = 0
    refreshList()
  })

  /** The algorithm filter's choices: every algorithm the service serves (GET /algorithms). */
  async function loadAlgorithms() {
    if (state.algorithmsLoaded) return
    const body = await api('GET', '/algorithms')
    const select = $('algorithm-filter')
    const options = body.algorithms.map((a) =>
      element('option', { value: a.name, text: `${a.name} ${a.version}`, title: text(a.description) }),
    )
    select.replaceChildren(element('option', { value: '', text: 'all' }), ...options)
    select.value = state.algorithm
    state.algorithmsLoaded = true
  }
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

  // ---- one job -------------------------------------------------------------------------------

  function openJob(id) {
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

  function closeJob() {
    stopFollowing()
    state.openJob = null
    $('detail').hidden = true
    if (location.hash) history.pushState(null, '', location.pathname + location.search)
    for (const row of document.querySelectorAll('#job-table tbody tr.selected'))
      row.classList.remove('selected')
  }

  /** The params of the job last read with them: { id, params }. */
  let shownParams = { id: null, params: null }

  function renderJob(job) {
    $('detail-id').textContent = job.job_id
    const started = ms(job.started_at)
    const created = ms(job.created_at)
    const end = ms(job.completed_at)
    const fields = [
      ['Status', badge(job.status)],
      ['Algorithm', text(job.algorithm)],
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

  /** The events of a text/event-stream body as they complete, as EventSource reads them. */
  async function* streamEvents(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    let id = ''
    let type = ''
    let data = []
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += value
        let end = buffer.search(/\r\n|\r|\n/)
        // A CR that ends the buffer may be half of a CRLF: it waits for the next chunk.
        while (end !== -1 && !(end === buffer.length - 1 && buffer[end] === '\r')) {
          const line = buffer.slice(0, end)
          buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
          end = buffer.search(/\r\n|\r|\n/)
          if (line === '') {
            if (data.length > 0) yield { id, event: type || 'message', data: data.join('\n') }
            type = ''
            data = []
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':')
            const field = colon === -1 ? line : line.slice(0, colon)
            const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
            if (field === 'data') data.push(value)
            else if (field === 'event') type = value
            else if (field === 'id' && !value.includes('\0')) id = value
          }
        }
      }
    } finally {
      reader.cancel().catch(() => {})
    }
  }

  /** PrimeChecker's result in words: "91 is not prime: 7 × 13". */
  function primeView(result) {
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
  function valueView(value) {
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

  async function refreshDetail() {
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

  $('close-detail').addEventListener('click', closeJob)
  $('cancel-job').addEventListener('click', async () => {
    const id = state.openJob
    if (id === null) return
    // A cancel cannot be undone: the job fails, and a running one loses its work.
    if (!confirm(`Cancel job ${id}? It will fail with "The job was cancelled."; this cannot be undone.`))
      return
    $('cancel-job').disabled = true
    try {
      renderJob(await api('POST', `${jobPath(id)}/cancel`))
      clearMessage()
    } catch (error) {
      showMessage(`Cancel ${id}: ${error.message}`)
    }
    await refresh()
  })

  function jobFromHash() {
    const match = /^#job=(.+)$/.exec(location.hash)
    return match ? decodeURIComponent(match[1]) : null
  }
  // Back, forward, or an address edited by hand (pushState itself fires nothing).
  window.addEventListener('hashchange', () => {
    const id = jobFromHash()
    if (id === null) closeJob()
    else openJob(id)
  })

  // ---- refreshing ------------------------------------------------------------------------------

  async function refreshList() {
    try {
      renderList(await loadList())
    } catch (error) {
      showMessage(`Job list (GET /jobs): ${error.message}`)
    }
  }

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
  function refresh() {
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

  $('refresh-now').addEventListener('click', refresh)
  setInterval(() => {
    if ($('auto-refresh').checked && document.visibilityState === 'visible') refresh()
  }, REFRESH_MS)

  const initial = jobFromHash()
  if (initial !== null) openJob(initial)
  refresh()
})()
