"""Unmodified CuPy under the agent: allocate GiB of arrays, compute, and
check the results after holding them (while another job may evict them)."""
import sys
import time
import cupy

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
arrays = [cupy.full((256, 1024, 1024), i, dtype=cupy.float32) for i in range(int(gib))]
a = cupy.arange(1 << 24, dtype=cupy.float64)
total = float((a * 2).sum())
time.sleep(hold)
ok = total == float((1 << 24) * ((1 << 24) - 1)) and all(bool((b == i).all()) for i, b in enumerate(arrays))
free, all_bytes = cupy.cuda.runtime.memGetInfo()
print(f"{'ok' if ok else 'bad'} view {free >> 20} MiB free of {all_bytes >> 20} MiB")
sys.exit(0 if ok else 1)
