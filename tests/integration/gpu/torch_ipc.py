"""Matrix row torch-ipc: torch.multiprocessing hands a CUDA tensor to a
second process (CUDA IPC: cudaIpcGetMemHandle here, cudaIpcOpenMemHandle
there), which reads it and adds to it in place; this one checks both, with
MIB of ballast held. A pipe, not a queue, so that a refused export fails
here at once instead of in a queue's feeder thread.
    torch_ipc.py MIB"""
from row_common import ballast_mib, finish, hold, need, torch_ballast, torch_intact

torch = need("torch")
mp = torch.multiprocessing
N = 1 << 22


def child(conn):
    shared = conn.recv()
    conn.send(int(shared.sum().item()))
    shared.add_(1)
    torch.cuda.synchronize()
    conn.send("added")


def receive(conn):
    if not conn.poll(300):
        raise TimeoutError("the second process said nothing for 300 s")
    return conn.recv()


if __name__ == "__main__":
    mp.set_start_method("spawn")
    ballast = torch_ballast(torch, ballast_mib())
    shared = torch.arange(N, dtype=torch.int64, device="cuda")
    here, there = mp.Pipe()
    proc = mp.Process(target=child, args=(there,))
    proc.start()
    hold(1)
    try:
        here.send(shared)	# exported while the other job presses
        seen, added = receive(here), receive(here)
    except Exception as e:
        seen, added = None, f"{type(e).__name__}: {e}"
    proc.join(timeout=60)
    if proc.exitcode is None:
        proc.kill()
    hold(2)
    intact = torch_intact(torch, ballast)
    after = int(shared.sum().item())
    expected = N * (N - 1) // 2
    ok = proc.exitcode == 0 and seen == expected and added == "added" and after == expected + N and intact
    finish(ok, f"second process saw {seen} ({added}), sum after its add {after}, its exit {proc.exitcode}, "
           f"ballast {'intact' if intact else 'CORRUPT'}", f"{seen} {after} intact={intact}")
