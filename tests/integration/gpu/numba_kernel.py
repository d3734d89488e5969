"""Matrix row numba: Numba CUDA kernels fill and transform device arrays
while MIB of ballast arrays are held, and the host checks them.
    numba_kernel.py MIB"""
from row_common import ballast_mib, finish, hold, need, skip

np = need("numpy")
cuda = need("numba.cuda")
if not cuda.is_available():
    skip("numba.cuda finds no usable GPU")


@cuda.jit
def fill(a, seed):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = seed ^ ((i * 2654435761) & 0xFFFFFFFF)


@cuda.jit
def mix(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = (a[i] * 3 + i) & 0xFFFFFFFF


def filled(n, seed):
    d = cuda.device_array(n, dtype=np.uint32)
    fill[(n + 255) // 256, 256](d, seed)
    return d


def expected(n, seed):
    return np.uint32(seed) ^ ((np.arange(n, dtype=np.uint64) * 2654435761) & 0xFFFFFFFF).astype(np.uint32)


n = 16 << 20
ballast = [filled(n, i) for i in range(ballast_mib() // 64)]
digests = []
for round_ in range(2):
    a = filled(1 << 22, 1000 + round_)
    b = cuda.device_array(1 << 22, dtype=np.uint32)
    mix[(1 << 22) // 256, 256](a, b)
    digests.append(int(np.bitwise_xor.reduce(b.copy_to_host())))
    hold(round_ + 1)	# the second round runs while the other job presses
intact = all(np.array_equal(d.copy_to_host(), expected(n, i)) for i, d in enumerate(ballast))
finish(intact, f"{len(ballast)} x 64 MiB ballast {'intact' if intact else 'CORRUPT'}", f"{digests} intact={intact}")
