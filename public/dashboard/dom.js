// Building the page's nodes: elements, status badges and progress bars.

export const $ = (id) => document.getElementById(id)

export function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value
    else node.setAttribute(name, value)
  }
  for (const child of children) node.append(child)
  return node
}

export function badge(status) {
  return element('span', { class: `badge ${status}`, text: status })
}

/** Whole percents, rounded down: 100% only once the run says it has done everything. */
const percent = (fraction) => Math.floor(Math.min(1, Math.max(0, Number(fraction) || 0)) * 100)

/**
 * A progress bar (role=progressbar, 0 to 100) with its percentage beside it; the message is its title
 * and part of what a screen reader says. `update` sets it again.
 */
export function progressBar(label) {
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
