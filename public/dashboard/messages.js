// The message line above the panels, and the form that asks for an API key.
import { $ } from './dom.js'

export function showMessage(message) {
  $('message').textContent = message
  $('message').hidden = false
}
export const clearMessage = () => {
  $('message').hidden = true
}

export function askForKey(reason) {
  $('key-reason').textContent = reason
  $('key-form').hidden = false
}
