#!/usr/bin/env python3
"""Tallies one run of a public S3 conformance suite against its list of
expected failures.

    tally.py FORMAT LABEL OUTPUT EXPECTED FAILURES

FORMAT is "minio-go" (mint's JSON log: one object per line with "name" and
"status" PASS, FAIL or NA) or "versitygw" (its coloured RUN/PASS/FAIL/SKIP
lines). Prints "LABEL: N pass, M fail, K na|skip", every failure that
EXPECTED does not list (exit status 1: a regression), and every listed test
that now passes (only printed: the list can be trimmed). Writes every failure
of this run to FAILURES as "name  # reason", the form EXPECTED is written in.

With CONFORMANCE_UPDATE=1 it rewrites EXPECTED instead of failing: lines of
tests that passed are dropped, new failures are appended under a heading that
asks for their feature to be named.
"""

import json
import os
import re
import sys
from collections import Counter

# A test that logs several results takes the worst of them.
RANK = {"RUN": 0, "NA": 1, "SKIP": 1, "PASS": 2, "TEARDOWN": 3, "FAIL": 4}
FAILING = ("FAIL", "TEARDOWN", "RUN")
REASON_MAX = 300
# Test names of versioning and object lock (minio-go's and versitygw's).
VERSIONING = re.compile(r"(?i)version|objectlock|object_lock|retention|legalhold|legal_hold|worm")


# The AWS SDK's error text carries request IDs that differ on every run, and
# versitygw prints the error it expected as a whole XML document.
SDK_NOISE = [
    (re.compile(r"RequestID: [^,]*, HostID: [^,]*, "), ""),
    (re.compile(r"<\?xml[^>]*\?>\s*<APIError><Code>(.*?)</Code><Description>(.*?)</Description>"
                r"<HTTPStatusCode>(\d+)</HTTPStatusCode></APIError>"), r'\3 \1 "\2"'),
    (re.compile(r"0x[0-9a-f]{6,}"), "0x.."),  # Go pointers in printed structs
    (re.compile(r"operation error S3: (\w+), https? response error StatusCode: (\d+), (?:api error )?"), r"\1 \2 "),
]


def one_line(text):
    """Collapses whitespace and SDK noise so that a reason fits on one line."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    for pattern, repl in SDK_NOISE:
        text = pattern.sub(repl, text)
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 3] + "..."


class Results:
    """Final status and reason of each test, in the order the suite ran them.
    A name the suite runs again (minio-go's V2 and V4 tests share helpers)
    is kept apart as NAME/2, NAME/3, ... in run order."""

    def __init__(self):
        self.status = {}
        self.runs = Counter()

    def start(self, name):
        self.runs[name] += 1
        n = self.runs[name]
        return name if n == 1 else f"{name}/{n}"

    def add(self, name, status, reason=""):
        cur = self.status.get(name)
        if cur is None or RANK[status] > RANK[cur[0]]:
            self.status[name] = (status, one_line(reason))

    def failures(self):
        return {n: r for n, (s, r) in self.status.items() if s in FAILING}

    def counts(self):
        return Counter(s for s, _ in self.status.values())


def minio_reason(rec):
    """The message and error of a mint FAIL record, with the arguments that
    say which case of a looping test failed."""
    parts = [rec.get("message") or rec.get("function", "")]
    if rec.get("error"):
        parts.append(str(rec["error"]))
    args = rec.get("args") or {}
    picked = [f"{k}={args[k]}" for k in ("checksum", "region", "section") if k in args]
    if picked:
        parts.append("[" + " ".join(picked) + "]")
    return ": ".join(p for p in parts[:2] if p) + (" " + parts[2] if len(parts) > 2 else "")


def parse_minio(path):
    res = Results()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            name = str(rec.get("name", "")).removeprefix("minio-go: ")
            status = rec.get("status")
            if not name or status not in RANK:
                continue
            reason = minio_reason(rec) if status == "FAIL" else rec.get("alert", "")
            res.add(res.start(name), status, reason)
    return res


# versitygw colours each marker; a failed teardown is printed in red without
# a marker or a newline, so records are split at colour codes, not lines.
VGW_MARK = re.compile(r"^(RUN|PASS|FAIL|SKIP) +([^\s:]+):?\s*(.*)")
VGW_TEARDOWN = re.compile(r"^([^\s:]+): failed to delete the bucket: (.*)")


def parse_versitygw(path):
    res = Results()
    current = {}  # name -> the key of its latest RUN
    with open(path, encoding="utf-8", errors="replace") as f:
        raw = f.read()
    for piece in re.split(r"\x1b\[3\dm", raw):
        piece = piece.replace("\x1b[0m", "")
        piece = piece.split("\nRAN: ", 1)[0]  # the closing tally follows the last test
        first, _, more = piece.partition("\n")
        m = VGW_MARK.match(first)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind == "RUN" or name not in current:
                current[name] = res.start(name)
            # A failure's message may go on over several lines (XML bodies).
            res.add(current[name], kind, m.group(3) + " " + more)
            continue
        m = VGW_TEARDOWN.match(first)
        if m:
            key = current.get(m.group(1)) or res.start(m.group(1))
            res.add(key, "TEARDOWN", "teardown: DeleteBucket failed: " + m.group(2))
    # A test that printed RUN and nothing else never reached a verdict.
    for name, (status, _) in list(res.status.items()):
        if status == "RUN":
            res.status[name] = ("RUN", "no verdict printed (RUN only)")
    return res


def load_expected(path):
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path, encoding="utf-8") as f:
        for line in f:
            body = line.split("#", 1)[0].strip()
            if body:
                expected[body] = line.split("#", 1)[1].strip() if "#" in line else ""
    return expected


def rewrite_expected(path, res):
    """Keeps the listed lines of tests that still fail (or did not run),
    drops those that passed, appends new failures."""
    failures = res.failures()
    kept, seen = [], set()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                name = line.split("#", 1)[0].strip()
                if name and name in res.status and name not in failures:
                    continue
                seen.add(name)
                kept.append(line.rstrip("\n"))
    new = [n for n in failures if n not in seen]
    if new:
        kept += ["", "## new failures: name the feature of each"]
        kept += [f"{n}  # {failures[n]}" for n in new]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(kept).strip("\n") + "\n")


def main(argv):
    if len(argv) != 6 or argv[1] not in ("minio-go", "versitygw"):
        sys.exit(__doc__)
    fmt, label, output, expected_path, failures_path = argv[1:]
    res = parse_minio(output) if fmt == "minio-go" else parse_versitygw(output)
    counts = res.counts()
    failures = res.failures()
    expected = load_expected(expected_path)
    with open(failures_path, "w", encoding="utf-8") as f:
        for name, reason in failures.items():
            f.write(f"{name}  # {reason}\n")

    other = "na" if fmt == "minio-go" else "skip"
    print(f"{label}: {counts['PASS']} pass, {len(failures)} fail, "
          f"{counts['NA'] + counts['SKIP']} {other} ({len(res.status)} tests)")
    if not res.status:
        print(f"{label}: no test result in {output}")
        return 1
    # The versioning and object-lock tests' own score, which the
    # versioning work is judged by.
    subset = {n: s for n, (s, _) in res.status.items() if VERSIONING.search(n)}
    if subset:
        sub = Counter(s for s in subset.values())
        print(f"{label}, versioning and object lock tests: {sub['PASS']} pass, "
              f"{sum(sub[s] for s in FAILING)} fail, {sub['NA'] + sub['SKIP']} {other} ({len(subset)} tests)")

    unexpected = [n for n in failures if n not in expected]
    fixed = [n for n in expected if res.status.get(n, ("",))[0] in ("PASS", "SKIP", "NA")]
    missing = [n for n in expected if n not in res.status]
    for n in fixed:
        print(f"{label}: now passes, trim it from {os.path.basename(expected_path)}: {n}")
    for n in missing:
        print(f"{label}: listed but not run: {n}")
    for n in unexpected:
        print(f"{label}: REGRESSION {n}: {failures[n]}")
    if os.environ.get("CONFORMANCE_UPDATE") == "1":
        rewrite_expected(expected_path, res)
        print(f"{label}: rewrote {expected_path}")
        return 0
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
