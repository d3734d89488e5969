"""Matrix rows cupy-default and cupy-async: unmodified CuPy computes with
MIB of arrays held, from its default memory pool or, with "async", from
cupy.cuda.MemoryAsyncPool (cudaMallocAsync); checks the arrays and the
results after the other job has come and gone, and shows the job's view
of memory (cudaMemGetInfo).
    cupy_smoke.py MIB [default|async]"""
import sys

from row_common import ballast_mib, finish, hold, need

cupy = need("cupy")
pool = sys.argv[2] if len(sys.argv) > 2 else "default"
if pool == "async":
    cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)
elif pool != "default":
    sys.exit(f"cupy_smoke.py: pool {pool} is neither default nor async")
arrays = [cupy.full((16 << 20,), i, dtype=cupy.float32) for i in range(ballast_mib() // 64)]
a = cupy.arange(1 << 24, dtype=cupy.uint64)
sums = [int((a * 2).sum())]
hold(1)
sums.append(int(((a * 3) ^ (a >> 3)).sum()))	# while the other job presses
hold(2)
intact = all(bool((b == i).all()) for i, b in enumerate(arrays))
ok = sums[0] == (1 << 24) * ((1 << 24) - 1) and intact
free, total = cupy.cuda.runtime.memGetInfo()
finish(ok, f"{pool} pool, {len(arrays)} x 64 MiB {'intact' if intact else 'CORRUPT'}, "
       f"view {free >> 20} MiB free of {total >> 20} MiB", f"{sums} intact={intact}")
