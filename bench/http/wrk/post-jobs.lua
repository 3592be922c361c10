-- The small-prime POST /jobs load of bench/http/wrk/jobs.sh and of the scripts that share it (algorithm-jobs.sh,
-- jobs-ab.sh, jobs-api-ab.sh, profile-jobs.sh): JOB_BODY replaces the body, IDS_DIR names the folder where
-- each wrk thread writes the ids of the jobs it created, to a file of its own; RATE and THREADS pace it
-- (bench/http/wrk/pace.lua).
dofile("bench/http/wrk/pace.lua")
local threads = 0
function setup(thread)
  thread:set("n", threads)
  threads = threads + 1
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local body = os.getenv("JOB_BODY") or ""
  wrk.body = body ~= "" and body or '{"algorithm":"PrimeChecker","params":{"number":1000003}}'
  out = io.open(os.getenv("IDS_DIR") .. "/ids-" .. n .. ".txt", "w")
  pace_start()
end
function response(status, headers, body)
  local id = body:match('"job_id":"(%x+)"')
  if status == 202 and id then out:write(id, "\n") else io.stderr:write("POST /jobs: ", status, "\n") end
  out:flush()
end
