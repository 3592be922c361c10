-- Loaded by the wrk scripts of bench/http (dofile, from the repository's root). With RATE set, each wrk
-- thread sends on its own fixed schedule, RATE / THREADS requests a second (THREADS: wrk's -t), whatever
-- the answers' latency: the next send is due one interval after the previous one was due (a late send does
-- not push the schedule back), so the offered rate is RATE as long as a connection is free. Without RATE,
-- delay() is 0: a closed loop, each connection sending as soon as its answer is in.
local ffi = require("ffi")
ffi.cdef[[
  typedef struct { long tv_sec; long tv_usec; } bench_timeval;
  int gettimeofday(bench_timeval *tv, void *tz);
]]
local tv = ffi.new("bench_timeval")
local function now_ms()
  ffi.C.gettimeofday(tv, nil)
  return tonumber(tv.tv_sec) * 1000 + tonumber(tv.tv_usec) / 1000
end
local interval, due

-- Called from the script's init(): starts this thread's schedule.
function pace_start()
  local rate = tonumber(os.getenv("RATE") or "")
  interval = rate and (tonumber(os.getenv("THREADS")) * 1000 / rate) or nil
  due = now_ms()
end

function delay()
  if not interval then return 0 end
  due = due + interval
  return math.max(0, math.floor(due - now_ms()))
end
