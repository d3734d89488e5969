"""What the Python rows of the GPU matrix share (matrix.sh): the
ballast argument, skipping when a module is missing, the pauses beside the
holding job, and the result line run.sh compares between the run without
the agent and the run under it. gpu_common.cuh has the same for CUDA."""
import importlib
import json
import os
import sys
import time

SKIP = 77	# the exit status of a row that cannot run here


def ballast_mib():
    """MiB the row holds through its framework's allocator (argument 1)."""
    return int(sys.argv[1]) if len(sys.argv) > 1 else 256


def need(module):
    """The module, or a clean skip that names it."""
    try:
        return importlib.import_module(module)
    except Exception as e:	# ImportError, or a module broken at import
        skip(f"{module} is not importable ({type(e).__name__}: {e})")


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(SKIP)


def hold(n):
    """Under run.sh (GOS_ROW_RELEASE=DIR): says "holding N" and waits until
    DIR/N exists, so that the other job comes and goes at fixed points."""
    folder = os.environ.get("GOS_ROW_RELEASE")
    if not folder:
        return
    print(f"holding {n}", flush=True)
    deadline = time.monotonic() + 600
    while not os.path.exists(os.path.join(folder, str(n))):
        if time.monotonic() > deadline:
            print(f"bad: {folder}/{n} never appeared", flush=True)
            sys.exit(1)
        time.sleep(0.1)


def pressed(work, steps):
    """work(steps) before the other job comes, and as much again while it
    presses (between the two pauses)."""
    work(steps)
    hold(1)
    work(steps)
    hold(2)


def finish_training(curve, intact, pieces, what="", fell_to=1.0, every=1, healthy=True):
    """The verdict of a training row: the loss fell below fell_to of its
    start, the model is healthy and the ballast intact; the curve compared
    is every every-th point."""
    ok = curve[-1] < curve[0] * fell_to and healthy and intact
    finish(ok, f"{what}loss {curve[0]:.4f} -> {curve[-1]:.4f}, {pieces} x 64 MiB ballast "
           f"{'intact' if intact else 'CORRUPT'}", f"ballast {pieces} intact={intact}", curve[::every])


def finish(ok, note, checksum, curve=()):
    """The row's verdict and its result line; exits."""
    print(f"{'ok' if ok else 'bad'} {note}")
    print("result " + json.dumps({"checksum": str(checksum), "curve": [float(x) for x in curve]}), flush=True)
    sys.exit(0 if ok else 1)


def torch_ballast(torch, mib):
    """64 MiB tensors, the i-th filled with i."""
    return [torch.full((16 << 20,), float(i), device="cuda") for i in range(mib // 64)]


def torch_intact(torch, ballast):
    torch.cuda.synchronize()
    return all(bool((b == float(i)).all()) for i, b in enumerate(ballast))
