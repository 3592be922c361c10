// Preloaded by bench/http/wrk/invoke-counts.sh (node --import): V8's sampling heap profiler, objects freed by
// the young and old generations' collections included, so that what a request allocates is counted and not
// only what it keeps. SIGUSR2 starts the sampling; the next SIGUSR2 writes the profile to $HEAP_PROFILE.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

const session = new Session()
session.connect()
let sampling = false
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
    return
  }
  session.post('HeapProfiler.stopSampling', (error, { profile }) => {
    if (error) throw error
    writeFileSync(process.env.HEAP_PROFILE, JSON.stringify(profile))
  })
})
