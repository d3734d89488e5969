#!/usr/bin/env python3
"""Keeps the GPU compatibility matrix in bench/RESULTS.md, between the
gpu_matrix markers, one line per row of tests/integration/gpu/matrix.sh.
  gpu_matrix.py RESULTS measured GPU ROW_JSON...   rows as run.sh
      judged them (row_report.py): replaces those rows' lines, dated today
  gpu_matrix.py RESULTS not-run WHY < ROWS         every row of ROWS
      (run.sh --list: NAME<TAB>LABEL) marked "not yet run (WHY)"
Rows not named keep their line; new rows are added at the end."""
import datetime
import json
import pathlib
import re
import subprocess
import sys

HEAD = ["Row", "Program", "Correct", "Evictable bytes", "Evicted / returned", "Date", "GPU", "Notes"]
INTRO = """## Compatibility matrix on a GPU

`make check-gpu` (`tests/integration/gpu/run.sh`, rows in `matrix.sh` there):
each row's program runs without the agent, then under it beside a job holding
60% of the managed capacity; "correct" means both runs passed their own checks
and printed the same result (checksum, or loss curve within 1e-3). Evictable
bytes are the daemon's demand less its unevictable bytes for the row's job
while pressed; evicted and returned bytes are from the job's report."""


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def existing(body, begin, end):
    """NAME -> table line, in order, from the current section."""
    m = re.search(re.escape(begin) + "(.*)" + re.escape(end), body, flags=re.S)
    rows = {}
    for line in (m.group(1) if m else "").splitlines():
        name = re.match(r"\| `([^`]+)` \|", line)
        if name:
            rows[name.group(1)] = line
    return rows


def line(name, label, correct, evictable, moved, date, gpu, note):
    return "| " + " | ".join(cell(c) for c in (f"`{name}`", label, correct, evictable, moved, date, gpu, note)) + " |"


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ("measured", "not-run"):
        sys.exit(__doc__)
    path, mode = sys.argv[1], sys.argv[2]
    body = open(path).read()
    rows = existing(body, "<!-- gpu_matrix:begin -->", "<!-- gpu_matrix:end -->")
    if mode == "measured":
        gpu, today = sys.argv[3], str(datetime.date.today())
        for f in sys.argv[4:]:
            r = json.load(open(f))
            rows[r["name"]] = line(r["name"], r["label"], r["correct"], r["evictable"],
                                   f"{r['evicted']} / {r['returned']}", today, gpu, r["note"])
    else:
        for entry in sys.stdin.read().splitlines():
            name, label = entry.split("\t", 1)
            rows[name] = line(name, label, f"not yet run ({sys.argv[3]})", "-", "-", "-", "-", "")
    table = [INTRO, "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)] + list(rows.values())
    subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("results_section.py")), path, "gpu_matrix",
                    "\n".join(table)], check=True)


if __name__ == "__main__":
    main()
