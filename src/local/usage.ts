// The usage of `check` and `run`, apart from them: `algoserve --help` shows it without loading them.
export const LOCAL_USAGE = `Before serving (in this process, no server; serve's settings from the environment):
  algoserve check [<path> ...]                loads the algorithms as serve would, runs every example
                                              with the algorithm's limits and checks each result
                                              against the result schema: one line per algorithm;
                                              paths as ALGOSERVE_ALGORITHMS takes them (default: its
                                              value)
  algoserve run <path> [--algorithm A] [--params JSON] [key=value ...]
                                              one call: the result's JSON on stdout, progress and
                                              the time it took on stderr; A: which of the path's
                                              algorithms, when it holds more than one

  Exit codes: 0 success; 1 a check or the run failed (or the algorithm refused its params);
  2 usage error.
`
