"""Matrix row triton: a Triton kernel over PyTorch tensors (integer
arithmetic, so results compare exactly) while MIB of ballast is held.
    triton_kernel.py MIB"""
from row_common import ballast_mib, finish, hold, need, torch_ballast, torch_intact

torch = need("torch")
triton = need("triton")
tl = need("triton.language")


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 3 + y, mask=mask)


def run(n, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randint(0, 1 << 20, (n,), device="cuda", dtype=torch.int64, generator=gen)
    y = torch.randint(0, 1 << 20, (n,), device="cuda", dtype=torch.int64, generator=gen)
    out = torch.empty_like(x)
    axpy[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    good = bool((out == x * 3 + y).all())
    return int(out.sum()), good


ballast = torch_ballast(torch, ballast_mib())
sums, good = [], True
for round_ in range(2):
    s, g = run(1 << 22, round_)
    sums.append(s)
    good &= g
    hold(round_ + 1)	# the second round runs while the other job presses
intact = torch_intact(torch, ballast)
finish(good and intact, f"kernel results {'right' if good else 'WRONG'}, ballast {'intact' if intact else 'CORRUPT'}",
       f"{sums} intact={intact}")
