// What the page shows: the list's filters and page, and the open job.

export const state = {
  status: '',
  algorithm: '',
  /** The version filter: jobs of that version of the algorithm, picked from the page GET /jobs gave. */
  version: '',
  /** Each algorithm's loaded versions (GET /algorithms), highest first, for the version filter. */
  versions: new Map(),
  /** The algorithm filter's choices are read once, when the service first lists them. */
  algorithmsLoaded: false,
  /** The cursor of each page seen so far: [null, cursor of page 2, ...]. */
  cursors: [null],
  page: 0,
  nextCursor: null,
  openJob: null,
}
