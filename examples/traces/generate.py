#!/usr/bin/env python3
"""Writes the example traces in this folder. Deterministic: rerunning it
reproduces the committed files. Format: gpuoversub-sim(1)."""
import random

HEADER = "time,tenant,op,size,priority,tag,access\n"


def write(name, comment, lines):
    with open(name, "w") as out:
        out.write("".join(f"# {c}\n" for c in comment))
        out.write(HEADER)
        for line in sorted(lines, key=lambda l: l[0]):
            out.write(",".join(str(f) for f in line) + "\n")


def rodinia_pair():
    """GPUswap thesis chapter 6: two instances of one Rodinia-like
    benchmark on a 16 GiB GPU, each needing about 10 GiB, the second
    starting later; hot buffers carry high priorities."""
    buffers = [("input", "4G", 4, 0.5), ("matrix", "3G", 12, 20),
               ("temp", "2G", 8, 5), ("result", "1G", 10, 10)]
    lines = [(0, "", "capacity", "16G", "", "", "")]
    for tenant, start, stop in [("inst-a", 0.0, 30.0), ("inst-b", 2.0, 40.0),
                                ("inst-a", 35.0, 60.0)]:
        for i, (tag, size, prio, access) in enumerate(buffers):
            lines.append((start + 0.1 * i, tenant, "alloc", size, prio, tag, access))
            lines.append((stop - 0.1 * i, tenant, "free", "", "", tag, ""))
    write("rodinia-pair.csv", ["Two Rodinia-like instances on a 16 GiB GPU (GPUswap thesis, ch. 6)."], lines)


def pagedos():
    """PILOT's pageDoS: a co-runner grows to 150% of an 80 GiB GPU in 1 GiB
    steps while a victim computes on a 40 GiB hot working set."""
    lines = [(0, "", "capacity", "80G", "", "", "")]
    lines += [(0.0, "victim", "alloc", "30G", 12, "weights", 30),
              (0.1, "victim", "alloc", "10G", 6, "scratch", 5),
              (120.0, "victim", "free", "", "", "weights", ""),
              (120.0, "victim", "free", "", "", "scratch", "")]
    for i in range(120):
        t = 10.0 + 0.5 * i
        lines.append((round(t, 2), "pagedos", "alloc", "1G", "", f"page{i}", 1))
        lines.append((100.0 + 0.05 * i, "pagedos", "free", "", "", f"page{i}", ""))
    write("pagedos-150.csv", ["PILOT pageDoS-like co-runner reaching 150% of an 80 GiB GPU."], lines)


def mixed8():
    """A shared node: 8 jobs with weights from their QOS, arriving and
    leaving over five minutes on an 80 GiB GPU."""
    rng = random.Random(8)
    lines = [(0, "", "capacity", "80G", "", "", "")]
    weights = [1, 1, 2, 2, 1, 4, 1, 2]
    for j, w in enumerate(weights):
        job = f"job{j}"
        start = rng.uniform(0, 120)
        lines.append((round(start, 2), job, "weight", w, "", "", ""))
        t = start
        live = []
        for k in range(rng.randint(3, 7)):
            t += rng.uniform(0.5, 10)
            size = rng.choice(["2G", "4G", "6G", "8G", "12G"])
            prio = rng.randint(2, 13)
            access = round(rng.uniform(0.5, 20), 1)
            lines.append((round(t, 2), job, "alloc", size, prio, f"b{k}", access))
            live.append(f"b{k}")
            if len(live) > 2 and rng.random() < 0.3:
                gone = live.pop(rng.randrange(len(live)))
                lines.append((round(t + 0.01, 2), job, "free", "", "", gone, ""))
        lines.append((round(min(t + rng.uniform(60, 150), 300), 2), job, "exit", "", "", "", ""))
    lines.append((150.0, "", "external", "4G", "", "", ""))
    lines.append((200.0, "", "external", "0", "", "", ""))
    write("mixed-8.csv", ["Eight jobs with QOS weights sharing an 80 GiB GPU; another",
                          "process takes 4 GiB outside gpuoversub from 150 s to 200 s."], lines)


def churn():
    """Issue 24's churn: a tenant cycles its fair share (2 GiB of a 4 GiB
    GPU) every 200 ms, allocating and freeing it, as a training loop with
    torch.cuda.empty_cache() does, beside a steady borrower that wants
    3 GiB. Each free lends the borrower memory that the next allocation
    takes back."""
    lines = [(0, "", "capacity", "4G", "", "", "")]
    for i, (tag, size, prio, access) in enumerate([("weights", "1G", 12, 10), ("activations", "1G", 8, 5),
                                                    ("optimizer", "1G", 4, 1)]):
        lines.append((round(0.1 * i, 2), "steady", "alloc", size, prio, tag, access))
    for k in range(300):
        t = 1.0 + 0.2 * k
        lines.append((round(t, 2), "cycler", "alloc", "2G", 8, "batch", 10))
        lines.append((round(t + 0.1, 2), "cycler", "free", "", "", "batch", ""))
    for tag in ("weights", "activations", "optimizer"):
        lines.append((62.0, "steady", "free", "", "", tag, ""))
    write("churn-200ms.csv", ["A tenant allocating and freeing its fair share every 200 ms beside a steady",
                              "borrower (issue 24, finding 9): the lending backoff's trace."], lines)


if __name__ == "__main__":
    rodinia_pair()
    pagedos()
    mixed8()
    churn()
