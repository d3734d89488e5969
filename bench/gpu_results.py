#!/usr/bin/env python3
"""gpu_results.py DIR RESULTS README: writes what tests/integration/gpu/run.sh
(or the GPU bundle's run.sh, one subdirectory of DIR per stage) left in DIR
into bench/RESULTS.md and the README's framework table, as ratios to the
baselines measured in the same run. Each section is written only from the
stages that ran; the others keep their text. The files read:
  gpu.tsv      KEY<TAB>VALUE: gpu, driver, card_mib, free_mib, capacity_mib, date
  figures.tsv  KEY<TAB>VALUE: bw_*, alloc_*, evict_gbs, pinned_d2h_gbs, pagedos_*
  lanes.out    lanes_bench's lines (lanes N evict GB/s return GB/s; pinned d2h h2d)
  relief.tsv   the pressure-relief grid, one line per N, M
  rows/*.json  the compatibility matrix's rows (row_report.py); rows/skipped.tsv
  stages.tsv   the bundle's stages: name, status, seconds, cap"""
import glob
import json
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
# The README's framework table: its Program cell's start, per matrix row.
README_ROWS = {
    "torch-default": "PyTorch, default caching allocator",
    "torch-expandable": "PyTorch, `expandable_segments:True`",
    "torch-async": "PyTorch, `backend:cudaMallocAsync`",
    "torch-graphs": "PyTorch, CUDA graphs",
    "torch-resnet": "PyTorch, ResNet",
    "torch-ipc-device": "PyTorch, `torch.multiprocessing`",
    "jax-prealloc": "JAX, default preallocation",
    "jax-noprealloc": "JAX, `XLA_PYTHON_CLIENT_PREALLOCATE=false`",
    "cupy-default": "CuPy, default pool",
    "cupy-async": "CuPy, `MemoryAsyncPool`",
    "numba": "Numba CUDA",
    "triton": "Triton",
    "driver-pool": "Explicit pools",
    "threads-streams": "Many threads and streams",
}


def tsv(path):
    """KEY -> VALUE from every such file under DIR (stages' subdirectories too)."""
    out = {}
    for f in path:
        for line in open(f).read().splitlines():
            key, _, value = line.partition("\t")
            if value and value != "-":
                out[key] = value
    return out


def number(figures, key):
    try:
        return float(figures[key])
    except (KeyError, ValueError):
        return None


def section(results, name, lines):
    subprocess.run([sys.executable, str(HERE / "results_section.py"), results, name, "\n".join(lines)], check=True)
    print("\n".join(lines) + "\n")


def stages_note(d):
    rows = [line.split("\t") for f in files(d, "stages.tsv") for line in open(f).read().splitlines()[1:]]
    return "; ".join(f"{r[0]} {r[1]} in {r[2]} s of {r[3]}" for r in rows if len(r) >= 4)


def files(d, name):
    return sorted(glob.glob(os.path.join(d, name)) + glob.glob(os.path.join(d, "*", name)))


def bench(figures, gpu, stages):
    bw, alloc = number(figures, "bw_plain"), number(figures, "alloc_plain")
    rows = []
    for mode in ("inline", "deferred"):
        b, a = number(figures, f"bw_{mode}"), number(figures, f"alloc_{mode}")
        if bw and b:
            rows.append((f"Kernel bandwidth, agent-backed / cudaMalloc, prefetch {mode}", f"{b:.1f} / {bw:.1f} GB/s",
                         f"{b / bw:.3f}", ">= 0.98"))
        if alloc is not None and a is not None:
            rows.append((f"Added allocation latency (median of 200 x 64 MiB), prefetch {mode}",
                         f"{a:.1f} - {alloc:.1f} us", f"{a - alloc:+.1f} us", "<= 20 us"))
    ev, pin = number(figures, "evict_gbs"), number(figures, "pinned_d2h_gbs")
    if ev and pin:
        rows.append(("Eviction (advise + prefetch to host, 4 GiB) / pinned D2H copy", f"{ev:.1f} / {pin:.1f} GB/s",
                     f"{ev / pin:.3f}", ">= 0.80"))
    alone, agent = number(figures, "pagedos_alone"), number(figures, "pagedos_agent")
    if alone and agent:
        rows.append(("PILOT pageDoS victim passes/s, with gpuoversub / alone", f"{agent:.2f} / {alone:.2f}",
                     f"{agent / alone:.2f}", "well below plain UVM: " + figures.get("pagedos_uvm", "not-run")))
    if not rows:
        return None
    again = number(figures, "bw_plain_again")
    text = [f"On-GPU benchmarks of the latest run, {gpu} (`make bench-gpu` or the GPU bundle's run.sh).", "",
            "| Measure | Figures | Ratio | Target |", "|---|---|---|---|"]
    text += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    if again:
        text += ["", f"Plain cudaMalloc bandwidth measured again at the end: {again:.1f} GB/s (the noise)."]
    return text + ([f"Stages: {stages}."] if stages else [])


def reserve(figures, gpu):
    plain_alloc, plain_bw = number(figures, "alloc_plain"), number(figures, "bw_plain")
    r_alloc, r_bw, r_bw_alloc = (number(figures, k) for k in ("alloc_reserve", "bw_reserve", "bw_reserve_alloc_us"))
    if None in (plain_alloc, plain_bw, r_alloc, r_bw):
        return None
    return [
        f"The agent's reserve (GPUOVERSUB_RESERVE={figures.get('reserve', '?')}) against plain cudaMalloc, {gpu}",
        "(gpu_bench's alloc and bandwidth-reused).", "",
        "| Measure | Figures | Ratio | Target |", "|---|---|---|---|",
        f"| Allocation latency (median of 200 x 64 MiB), reserve / cudaMalloc | {r_alloc:.1f} / {plain_alloc:.1f} us"
        f" | {r_alloc / plain_alloc:.2f} (added {r_alloc - plain_alloc:.1f} us) | <= 20 us added |",
        f"| Kernel bandwidth over a reserve block (allocated in {r_bw_alloc or 0:.1f} us) / cudaMalloc"
        f" | {r_bw:.1f} / {plain_bw:.1f} GB/s | {r_bw / plain_bw:.3f} | >= 0.98 |",
    ]


def pinned(d):
    """lanes_bench's pinned copies, D2H and H2D GB/s, and its text."""
    f = files(d, "lanes.out")
    text = open(f[0]).read() if f else ""
    m = re.search(r"^pinned d2h ([\d.]+) h2d ([\d.]+)", text, flags=re.M)
    return (float(m.group(1)), float(m.group(2))) if m else (None, None), text


def lanes(d, gpu):
    (d2h, h2d), text = pinned(d)
    runs = re.findall(r"^lanes (\d+) evict ([\d.]+) return ([\d.]+)", text, flags=re.M)
    if not d2h or not runs:
        return None
    out = [f"Eviction and return with the executor's lanes, {gpu} (lanes_bench):", "",
           "| Lanes | Eviction GB/s | / pinned D2H | Return GB/s | / pinned H2D | Targets |",
           "|---|---|---|---|---|---|"]
    out += [f"| {n} | {float(e):.1f} | {float(e) / d2h:.3f} | {float(r):.1f} | {float(r) / h2d:.3f} | >= 0.80, >= 0.80 |"
            for n, e, r in runs]
    return out + ["", f"Pinned cudaMemcpy in the same run: D2H {d2h:.1f} GB/s, H2D {h2d:.1f} GB/s."]


def relief(d, gpu, capacity, h2d):
    f = files(d, "relief.tsv")
    lines = [ln.split("\t") for ln in open(f[0]).read().splitlines()[1:]] if f else []
    if not lines:
        return None
    ms = lambda us: "-" if us == "-" else f"{float(us) / 1000:.1f}"  # noqa: E731
    out = [f"Pressure relief end to end, {gpu}: gpuoversubd manages {capacity} MiB; job 1 holds N, job 2",
           "allocates M and is timed until all of M is on the device (last prefetch location and a context",
           "synchronize). p99 is the nearest rank, so the slowest of few runs; the Runs column says how many",
           "ran of those asked for (fewer when the run's budget was short). Only the rows where job 1 holds",
           "all of the capacity evict; the others time allocation and prefetch alone. The last column is",
           f"p99 over a pinned host-to-device copy of M at {h2d or '?'} GB/s (lanes_bench, same run).", "",
           "| Job 1 holds | Job 2 allocates | Workers | Runs | Relief p50, ms | Relief p99, ms |"
           " p99 / pinned copy of M (target <= 2) |",
           "|---|---|---|---|---|---|---|"]
    for n, m, n_mib, m_mib, workers, reps, runs, p50, p99 in lines:
        copy_us = int(m_mib) * 1.048576 / h2d * 1000 if h2d else None
        ratio = f"{float(p99) / copy_us:.2f}" if copy_us and p99 != "-" else "-"
        out.append(f"| {n_mib} MiB ({n} GiB scaled) | {m_mib} MiB ({m} GiB scaled) | {workers} | {runs} of {reps}"
                   f" | {ms(p50)} | {ms(p99)} | {ratio} |")
    return out


def matrix(d, results, gpu):
    rows = sorted(set(files(d, "rows/*.json")))
    if rows:
        subprocess.run([sys.executable, str(HERE / "gpu_matrix.py"), results, "measured", gpu, *rows], check=True)
    skipped = "".join("\t".join(ln.split("\t")[:2]) + "\n" for f in files(d, "rows/skipped.tsv")
                      for ln in open(f).read().splitlines())
    if skipped:
        subprocess.run([sys.executable, str(HERE / "gpu_matrix.py"), results, "not-run", "budget of the run on " + gpu],
                       input=skipped, text=True, check=True)
    return [json.load(open(r)) for r in rows]


def readme(path, rows, gpu):
    """The Works and Evictable cells of the rows that ran."""
    body = open(path).read().splitlines()
    for r in rows:
        start = README_ROWS.get(r["name"])
        if not start or r.get("correct") not in ("yes", "no"):
            continue
        for i, line in enumerate(body):
            if line.startswith("| " + start):
                cells = line.split(" | ")
                moved = str(r.get("evicted", "-"))
                cells[1] = f"Yes ({gpu})" if r["correct"] == "yes" else f"No ({gpu}): see bench/RESULTS.md"
                if r["name"] == "torch-ipc-device":
                    cells[1] = "With `GPUOVERSUB_IPC=device`: " + cells[1]
                cells[2] = (f"Yes: {moved} evicted, {r.get('returned', '-')} returned" if re.match(r"[1-9]", moved)
                            else "No: nothing evicted under pressure")
                body[i] = " | ".join(cells)
    open(path, "w").write("\n".join(body) + "\n")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    d, results, readme_path = sys.argv[1:]
    info = tsv(files(d, "gpu.tsv"))
    if not info:
        sys.exit(f"gpu_results.py: no gpu.tsv in {d}: no stage ran on a GPU, nothing to write")
    card = f"{info.get('gpu', '?')}, driver {info.get('driver', '?')}"
    gpu = f"{card}, {info.get('date', '?')}"
    figures = tsv(files(d, "figures.tsv"))
    for name, text in (("bench_gpu_latest", bench(figures, gpu, stages_note(d))),
                       ("bench_gpu_reserve", reserve(figures, gpu)),
                       ("bench_gpu_lanes", lanes(d, gpu)),
                       ("bench_gpu_relief", relief(d, gpu, info.get("capacity_mib", "?"), pinned(d)[0][1]))):
        if text:
            section(results, name, text)
    readme(readme_path, matrix(d, results, card), gpu)


if __name__ == "__main__":
    main()
