#!/usr/bin/env python3
"""Writes the on-GPU figures of tests/integration/gpu/run.sh --bench into
bench/RESULTS.md, between the bench_gpu markers, and those of the agent's
reserve between the bench_gpu_reserve markers, as ratios to baselines
measured in the same run."""
import datetime
import pathlib
import subprocess
import sys

name, plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned, pagedos, reserve = sys.argv[1:10]
plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned, reserve_alloc, reserve_bw, reserve_bw_alloc = map(
    float, (plain_bw, agent_bw, plain_alloc, agent_alloc, evict, pinned, *sys.argv[10:13]))
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
reserve_body = [
    f"The agent's reserve (GPUOVERSUB_RESERVE={reserve}) against plain cudaMalloc, {name}, {datetime.date.today()}",
    "(`make bench-gpu`, gpu_bench's alloc and bandwidth-reused).", "",
    "| Measure | Figures | Ratio | Target |", "|---|---|---|---|",
    f"| Allocation latency (median of 200 x 64 MiB), reserve / cudaMalloc | {reserve_alloc:.1f} / {plain_alloc:.1f} us"
    f" | {reserve_alloc / plain_alloc:.2f} (added {reserve_alloc - plain_alloc:.1f} us) | <= 20 us added |",
    f"| Kernel bandwidth over a reserve block (allocated in {reserve_bw_alloc:.1f} us) / cudaMalloc"
    f" | {reserve_bw:.1f} / {plain_bw:.1f} GB/s | {reserve_bw / plain_bw:.3f} | >= 0.98 |",
]
for section, text in (("bench_gpu", body), ("bench_gpu_reserve", reserve_body)):
    subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("results_section.py")), "bench/RESULTS.md",
                    section, "\n".join(text)], check=True)
    print("\n".join(text))
