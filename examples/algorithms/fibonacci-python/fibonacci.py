"""Fibonacci: an Algoserve process algorithm in Python, standard library only (docs/algorithms.md).

Reads one JSON request per line on stdin, writes progress lines and then one answer line on stdout,
and exits when stdin closes. Python's integers are exact at any size, and so is its json module.
"""
import contextlib
import json
import sys

# Optional: with the OpenTelemetry SDK installed (and configured by its OTEL_* variables), each call is a
# span of the trace of the request or job that made it; without it, the program runs the same.
try:
    from opentelemetry import trace
    from opentelemetry.propagate import extract

    tracer = trace.get_tracer("fibonacci")
except ImportError:
    tracer = None


def traced(request):
    """A span of the caller's trace (the request's "trace" member, W3C Trace Context), or nothing."""
    if tracer is None or "trace" not in request:
        return contextlib.nullcontext()
    return tracer.start_as_current_span("fibonacci", context=extract(request["trace"]))


def send(call_id, **message):
    sys.stdout.write(json.dumps({"id": call_id, **message}) + "\n")
    sys.stdout.flush()


def fibonacci(n, report):
    a, b = 0, 1
    step = max(1, n // 10)
    for i in range(1, n + 1):
        a, b = b, a + b
        if i % step == 0:
            report(i / n, f"{i} of {n} steps")
    return a


def main():
    for line in sys.stdin:
        request = json.loads(line)
        call_id = request["id"]
        with traced(request):
            try:
                n = request["params"]["n"]
                value = fibonacci(n, lambda fraction, text: send(call_id, progress=fraction, message=text))
                send(call_id, result={"n": n, "value": value})
            except Exception as error:  # the client sees this text, so it says what went wrong
                send(call_id, error=str(error))


if __name__ == "__main__":
    main()
