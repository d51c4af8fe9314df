#!/usr/bin/env python3
"""How a burst's GETs reach a gateway's fetch pool.

Reads the JSON log of a gateway run with --log-level debug (as
`LOG_LEVEL=debug KEEP=1 scripts/sched-live.sh` leaves it, gw0.log) and
groups its "pooled read" lines into bursts: submits less than GAP ms after
the previous one belong to the same burst. For each burst size seen it
prints how many bursts, and the median time from a burst's first submit to
its last, and per GET.

    scripts/pool-spread.py /tmp/tmp.XXXX/gw0.log
"""
import json
import statistics
import sys

GAP_MS = 100


def main(path):
    subs = []
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("message") == "pooled read":
                subs.append(rec["submitted_us"] / 1000)
    subs.sort()
    bursts, cur = [], []
    for t in subs:
        if cur and t - cur[-1] > GAP_MS:
            bursts.append(cur)
            cur = []
        cur.append(t)
    if cur:
        bursts.append(cur)
    by_size = {}
    for b in bursts:
        by_size.setdefault(len(b), []).append(b[-1] - b[0])
    for n in sorted(by_size):
        spread = statistics.median(by_size[n])
        per = spread / (n - 1) if n > 1 else 0
        print(f"{len(by_size[n]):4d} bursts of {n:4d} reads: first to last submit {spread:7.1f} ms (median), {per:5.2f} ms per read")


if __name__ == "__main__":
    main(sys.argv[1])
