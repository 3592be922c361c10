"""Fibonacci: an Algoserve process algorithm in Python, standard library only (docs/algorithms.md).

Reads one JSON request per line on stdin, writes progress lines and then one answer line on stdout,
and exits when stdin closes. Python's integers are exact at any size, and so is its json module.
"""
import json
import sys


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
        try:
            n = request["params"]["n"]
            value = fibonacci(n, lambda fraction, text: send(call_id, progress=fraction, message=text))
            send(call_id, result={"n": n, "value": value})
        except Exception as error:  # the client sees this text, so it says what went wrong
            send(call_id, error=str(error))


if __name__ == "__main__":
    main()
