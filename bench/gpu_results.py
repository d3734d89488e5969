#!/usr/bin/env python3
"""Writes the on-GPU figures of tests/integration/gpu/run.sh --bench into
bench/RESULTS.md, between the bench_gpu markers, as ratios to baselines
measured in the same run."""
import datetime
import pathlib
import subprocess
import sys

name, plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned, pagedos = sys.argv[1:9]
plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned = map(
    float, (plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned))
rows = [
    ("Kernel bandwidth, agent-backed / cudaMalloc", f"{agent_bw:.1f} / {plain_bw:.1f} GB/s",
     f"{agent_bw / plain_bw:.3f}", ">= 0.98"),
    ("Added allocation latency (median, 64 MiB)", f"{agent_alloc:.1f} - {plain_alloc:.1f} us",
     f"{agent_alloc - plain_alloc:.1f} us", "<= 20 us"),
    ("Eviction (advise + prefetch to host) / pinned D2H copy", f"{evict:.1f} / {pinned:.1f} GB/s",
     f"{evict / pinned:.3f}", ">= 0.80"),
]
body = [f"On-GPU benchmarks, {name}, {datetime.date.today()} (`make bench-gpu`).", "",
        "| Measure | Figures | Ratio | Target |", "|---|---|---|---|"]
body += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
body += ["", f"PILOT pageDoS co-runner at 150%: {pagedos}."]
subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("results_section.py")), "bench/RESULTS.md",
                "bench_gpu", "\n".join(body)], check=True)
print("\n".join(body))
