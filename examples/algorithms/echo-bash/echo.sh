#!/usr/bin/env bash
# Echo: an Algoserve process algorithm in Bash (docs/algorithms.md). Each request line is
# {"id":"...","params":{...},"timeout_ms":N}, written in that order without spaces; the params are
# cut out of it by parameter expansion, so that no program is started per call, and written back as
# the result, digit for digit. The loop, and so the process, ends when stdin closes.
while IFS= read -r line; do
  id=${line#'{"id":"'}
  id=${id%%'"'*}
  params=${line#*'"params":'}
  params=${params%',"timeout_ms":'*}
  printf '{"id":"%s","result":%s}\n' "$id" "$params"
done
