// Listing jobs (GET /jobs): the query, the page, and the cursor, the same in every backend. A cursor
// names the last job of a page by its place in the order (created_at desc, then id desc), not by an
// offset, so it stays valid while jobs are created: new jobs sort before it.
import { BadCursorError } from '../errors.js'
import type { JobRecord, JobState } from './job.js'

export interface JobListQuery {
  status: JobState | null
  algorithm: string | null
  limit: number
  cursor: ListPosition | null
}

export interface JobListPage {
  jobs: JobRecord[]
  /** Where the next page starts, or null at the end. */
  next: ListPosition | null
}

/** A place in the order: jobs after it were created earlier (or at the same ms with a smaller id). */
export interface ListPosition {
  createdAt: number
  id: string
}

/** The opaque cursor of a position: base64url of `created_at.id`. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(`${position.createdAt}.${position.id}`).toString('base64url')
}

export function decodeCursor(cursor: string): ListPosition {
  const match =
    cursor.length <= 64 && /^[A-Za-z0-9_-]+$/.test(cursor)
      ? /^([0-9]{1,15})\.([0-9a-f]{12})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
      : null
  if (match === null) throw new BadCursorError(cursor)
  return { createdAt: Number(match[1]), id: match[2] as string }
}
