#!/usr/bin/env python3
"""The GPU matrix's bookkeeping (matrix.sh).
  row_report.py field JOB KEY < STATUS_JSON   a tenant's figure, 0 if absent
  row_report.py row DIR NAME LABEL JOB        judges one row from what run_row
      left in DIR (plain.*, agent.*, holder.*, pressed.json, report.json):
      prints PASS/FAIL NAME ..., writes DIR/row.json, exits 0 or 1.
A row is correct when its program passes its own checks with and without
the agent, both runs print the same result (checksum equal, loss curve
within RTOL), and the holding job's data come back intact."""
import json
import math
import os
import sys

RTOL, ATOL = 1e-3, 1e-5


def tenant(status, job):
    for gpu in status.get("gpus", []):
        for t in gpu.get("tenants", []):
            if t.get("job") == job:
                return t
    return {}


def read(folder, name, default=""):
    try:
        with open(os.path.join(folder, name)) as f:
            return f.read()
    except OSError:
        return default


def result_of(text):
    lines = [ln for ln in text.splitlines() if ln.startswith("result ")]
    return json.loads(lines[-1][len("result "):]) if lines else None


def last_line(text):
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("result ", "holding "))]
    return lines[-1] if lines else "(no output)"


def same(a, b):
    """'' if the two results agree, else what differs."""
    if a["checksum"] != b["checksum"]:
        return f"checksum {a['checksum']} without the agent, {b['checksum']} with it"
    if len(a["curve"]) != len(b["curve"]):
        return f"loss curves of {len(a['curve'])} and {len(b['curve'])} points"
    for i, (x, y) in enumerate(zip(a["curve"], b["curve"])):
        if not math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL):
            return f"loss point {i}: {x} without the agent, {y} with it"
    return ""


def mib(n):
    return f"{n / (1 << 20):.0f} MiB"


def judge(folder, name, label, job):
    rc = {k: int(read(folder, k + ".rc", "1") or 1) for k in ("plain", "agent", "holder")}
    plain, agent = read(folder, "plain.out"), read(folder, "agent.out")
    row = {"name": name, "label": label, "evictable": "-", "evicted": "-", "returned": "-"}
    if rc["plain"] == 77:
        return dict(row, correct="skipped", note=last_line(plain).replace("SKIP: ", ""))
    if rc["plain"] != 0:
        return dict(row, correct="not judged", note=f"fails without the agent: {last_line(plain)}")
    status = json.loads(read(folder, "pressed.json", "{}") or "{}")
    t = tenant(status, job)
    if t:
        row["evictable"] = f"{mib(t['demand'] - t['unevictable'])} of {mib(t['demand'])}"
    report = json.loads(read(folder, "report.json", "{}") or "{}")
    if report:
        row["evicted"], row["returned"] = mib(report["bytes_evicted"]), mib(report["bytes_returned"])
    a, b = result_of(plain), result_of(agent)
    if rc["agent"] != 0 or b is None:
        return dict(row, correct="no", note=f"fails under the agent (exit {rc['agent']}): {last_line(agent)}")
    differs = same(a, b) if a else "no result line without the agent"
    if differs:
        return dict(row, correct="no", note=differs)
    if rc["holder"] != 0:
        return dict(row, correct="no", note=f"the holding job's data: {last_line(read(folder, 'holder.out'))}")
    return dict(row, correct="yes", note=last_line(agent))


def main():
    if sys.argv[1:2] == ["field"]:
        print(tenant(json.load(sys.stdin), int(sys.argv[2])).get(sys.argv[3], 0))
        return 0
    if sys.argv[1:2] != ["row"] or len(sys.argv) != 6:
        sys.exit(__doc__)
    folder, name, label, job = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    row = judge(folder, name, label, job)
    with open(os.path.join(folder, "row.json"), "w") as f:
        json.dump(row, f)
    passed = row["correct"] in ("yes", "skipped")
    verdict = "SKIP" if row["correct"] == "skipped" else "PASS" if passed else "FAIL"
    print(f"{verdict} {name} {row['correct']}: evictable {row['evictable']}, "
          f"evicted {row['evicted']}, returned {row['returned']}; {row['note']}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
