#!/usr/bin/python3
"""An agent on the wire, for the hostile-neighbour suite: says hello as the
process it is and then asks what an attacker would ask. Plain Python on the
wire ABI (include/gpuoversub/abi.h), runnable by any user.

  gos_agent.py SOCKET hello [--wait] [--cgroup DIR]
      --wait      reads a line from stdin first (the test registers us meanwhile)
      --cgroup D  makes cgroup D and moves this process into it first
      Prints "hello STATUS ERROR" and, whatever hello said, "stats STATUS
      ERROR" (STATS returns the job's data), or "stats: the daemon closed the
      connection" (as it does after a refused hello). Exits 0 if hello was
      accepted.
  gos_agent.py SOCKET alloc N
      Hello, then N allocations of 4 KiB; prints "alloc I STATUS ERROR" for
      each, then frees the first and allocates once more ("again ...").
  gos_agent.py SOCKET rank NODE
      Hello, then says it is MPI rank 0 of 1 on node NODE (its bytes as
      given, valid UTF-8 or not); prints "rank STATUS ERROR". Exits 0 if
      hello was accepted.
  gos_agent.py SOCKET big SIZE N [FLAGS]
      Hello, then N allocations of SIZE bytes with allocation FLAGS (2:
      AGAIN); prints "big I STATUS ERROR" for each and "held N" at the end,
      then waits for stdin to close, holding them.
  gos_agent.py SOCKET answering SIZE
      Hello, then one allocation of SIZE bytes ("answering STATUS ERROR"),
      then carries out every order it is sent at once, as a cooperating
      agent does, until stdin closes; prints "answered N" at the end.
  gos_agent.py SOCKET rank-reports FRAMES COUNT [NODE]
      Hello, then FRAMES rank reports of COUNT records each, every record a
      new rank on node NODE ("node"); prints "report I STATUS ERROR" for each.
  gos_agent.py SOCKET ranks N
      Hello, then N RANK requests (ranks 0 to 7 in turn); prints "ranks N
      STATUS ERROR" of the last.
  gos_agent.py SOCKET hellos N
      N connections that each say hello; prints "hellos ACCEPTED" and the
      first refusal, "refused STATUS ERROR", then holds them until stdin closes.
  gos_agent.py SOCKET hello-ranks N
      N connections one after another, each saying hello as rank I of N
      and closing; prints "hello-ranks ACCEPTED", the first refusal,
      "refused STATUS ERROR", and "refusals STATUS:COUNT ... in SECONDS s".
  gos_agent.py SOCKET stats-unread N
      N connections that each say hello and ask STATS, never reading the
      reply; prints "stats-unread N" and holds them until stdin closes.
  gos_agent.py SOCKET unfinished N
      N connections that each say hello and send 500 KiB of a 600 KiB rank
      report; prints "unfinished N" and holds them until stdin closes.
  gos_agent.py SOCKET begin RANK_REPORT
      Without hello, begins a 600 KiB rank report (its header and 1 KiB);
      prints the daemon's answer, "begin STATUS ERROR".
  gos_agent.py SOCKET at-pid PID USER hello [...]
      As root: places a child on exactly PID (kernel.ns_last_pid), which
      becomes USER and says hello as above. Tries until a deadline; exits 3
      if PID was never reached.
"""
import os
import pwd
import re
import select
import socket
import struct
import sys
import time

ABI_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../include/gpuoversub/abi.h")
with open(ABI_H) as abi:	# the version the daemon built from this tree speaks
    VERSION = int(re.search(r"#define GOS_WIRE_VERSION (\d+)", abi.read()).group(1))
MAGIC, REPLY = 0x31534F47, 0x100
HELLO, ALLOC, FREE, ORDER_DONE, STATS, RANK, RANK_REPORT = 1, 2, 3, 5, 7, 17, 18
ORDER = 0x101
ORDER_FRAME = struct.Struct("<QIIQQQQQQQiI")	# gos_wire_order
EVICT, RETURN = 1, 2
NAME_LEN = 64
RANK_RECORD = struct.Struct("<iiII64s9Q")
HDR = struct.Struct("<IHHII")
REP = struct.Struct("<iI128s")


def call(sock, kind, payload=b"", seq=[0]):
    seq[0] += 1
    sock.sendall(HDR.pack(MAGIC, VERSION, kind, seq[0], len(payload)) + payload)
    while True:	# skip pushed order frames
        hdr = recv(sock, HDR.size)
        _, _, rtype, _, length = HDR.unpack(hdr)
        body = recv(sock, length)
        if rtype == REPLY:
            status, _, error = REP.unpack(body[:REP.size])
            return status, error.split(b"\0")[0].decode(), body[REP.size:]


def recv(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise SystemExit("gos_agent: the daemon closed the connection")
        out += chunk
    return out


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s


def hello(sock):
    status, error, _ = call(sock, HELLO, struct.pack("<IiiIQ", os.getpid(), -1, -1, 1, 0))
    print("hello", status, error, flush=True)
    return status


def hello_and_stats(path, args):
    if "--wait" in args:
        sys.stdin.readline()
    if "--cgroup" in args:
        cg = args[args.index("--cgroup") + 1]
        os.makedirs(cg, exist_ok=True)
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    sock = connect(path)
    status = hello(sock)
    try:
        st, error, body = call(sock, STATS)
        print("stats", st, error or body[:40].decode(errors="replace"), flush=True)
    except (SystemExit, OSError):	# the daemon closed it (a write may see EPIPE)
        print("stats: the daemon closed the connection", flush=True)
    return 0 if status == 0 else 1


def allocs(path, n):
    sock = connect(path)
    if hello(sock):
        return 1
    first = None
    for i in range(n):
        status, error, body = call(sock, ALLOC, struct.pack("<IIIIQ", 0, 0, 0, 0, 4096))
        print("alloc", i, status, error, flush=True)
        if status == 0 and first is None:
            first = struct.unpack("<Q", body[:8])[0]
    call(sock, FREE, struct.pack("<Q", first))
    status, error, _ = call(sock, ALLOC, struct.pack("<IIIIQ", 0, 0, 0, 0, 4096))
    print("again", status, error, flush=True)
    return 0


def rank(path, node):
    sock = connect(path)
    if hello(sock):
        return 1
    name = os.fsencode(node)[:NAME_LEN - 1].ljust(NAME_LEN, b"\0")	# bytes as given
    status, error, _ = call(sock, RANK, struct.pack("<iiII", 0, 0, 1, 0) + name)
    print("rank", status, error, flush=True)
    return 0


def big(path, size, n, flags):
    sock = connect(path)
    if hello(sock):
        return 1
    held = 0
    for i in range(n):
        status, error, _ = call(sock, ALLOC, struct.pack("<IIIIQ", 0, 0, flags, 0, size))
        print("big", i, status, error, flush=True)
        held += status == 0
    print("held", held, flush=True)
    sys.stdin.read()
    return 0


def answering(path, size):
    sock = connect(path)
    if hello(sock):
        return 1
    status, error, _ = call(sock, ALLOC, struct.pack("<IIIIQ", 0, 0, 0, 0, size))
    print("answering", status, error, flush=True)
    sock.setblocking(False)
    answered, pending, seq = 0, b"", 1 << 20
    while True:
        ready, _, _ = select.select([sock, sys.stdin], [], [])
        if sys.stdin in ready and not sys.stdin.readline():
            break
        if sock not in ready:
            continue
        data = sock.recv(1 << 16)
        if not data:
            break
        pending += data
        while len(pending) >= HDR.size:
            _, _, kind, _, length = HDR.unpack(pending[:HDR.size])
            if len(pending) < HDR.size + length:
                break
            body, pending = pending[HDR.size:HDR.size + length], pending[HDR.size + length:]
            if kind != ORDER:
                continue	# the replies to our answers
            order, okind = ORDER_FRAME.unpack(body[:ORDER_FRAME.size])[:2]
            if order and okind in (EVICT, RETURN):
                seq += 1
                done = struct.pack("<QIIQ", order, 1, 0, 0)
                sock.setblocking(True)
                sock.sendall(HDR.pack(MAGIC, VERSION, ORDER_DONE, seq, len(done)) + done)
                sock.setblocking(False)
                answered += 1
    print("answered", answered, flush=True)
    return 0


def rank_reports(path, frames, count, node=b"node"):
    sock = connect(path)
    if hello(sock):
        return 1
    for i in range(frames):
        records = b"".join(RANK_RECORD.pack(i * count + r, 0, os.getpid(), 1, node, *[1] * 9)
                           for r in range(count))
        status, error, _ = call(sock, RANK_REPORT, struct.pack("<II", count, 0) + records)
        print("report", i, status, error, flush=True)
    return 0


def ranks(path, n):
    sock = connect(path)
    if hello(sock):
        return 1
    for i in range(n):
        status, error, _ = call(sock, RANK, struct.pack("<iiII64s", i % 8, 0, n, 0, b"node"))
    print("ranks", n, status, error, flush=True)
    return 0


def hellos(path, n):
    held, refusal = [], None
    for _ in range(n):
        sock = connect(path)
        status, error, _ = call(sock, HELLO, struct.pack("<IiiIQ", os.getpid(), -1, -1, 1, 0))
        if status == 0:
            held.append(sock)
        elif refusal is None:
            refusal = (status, error)
    print("hellos", len(held), flush=True)
    if refusal:
        print("refused", *refusal, flush=True)
    sys.stdin.read()
    return 0


def hello_ranks(path, n):
    accepted, refusal, refusals = 0, None, {}
    started = time.monotonic()
    for i in range(n):
        sock = connect(path)
        status, error, _ = call(sock, HELLO, struct.pack("<IiiIQ", os.getpid(), i, 0, n, 0))
        sock.close()
        accepted += status == 0
        if status:
            refusals[status] = refusals.get(status, 0) + 1
            refusal = refusal or (status, error)
    print("hello-ranks", accepted, flush=True)
    if refusal:
        print("refused", *refusal, flush=True)
    print("refusals", " ".join(f"{k}:{v}" for k, v in sorted(refusals.items())),
          "in %.1f s" % (time.monotonic() - started), flush=True)
    return 0


def stats_unread(path, n):
    held = []
    for _ in range(n):
        sock = connect(path)
        if hello(sock):
            break
        sock.sendall(HDR.pack(MAGIC, VERSION, STATS, 2, 0))	# and never read the reply
        held.append(sock)
    print("stats-unread", len(held), flush=True)
    sys.stdin.read()
    return 0


def unfinished(path, n):
    held = []
    count = 4000
    for _ in range(n):
        sock = connect(path)
        if hello(sock):
            return 1
        try:
            sock.sendall(HDR.pack(MAGIC, VERSION, RANK_REPORT, 2, 8 + count * RANK_RECORD.size) + b"\0" * (500 << 10))
        except OSError:
            pass	# cut off: the daemon's answer
        held.append(sock)
    print("unfinished", n, flush=True)
    sys.stdin.read()
    return 0


def begin(path):
    sock = connect(path)
    count = 4000
    sock.sendall(HDR.pack(MAGIC, VERSION, RANK_REPORT, 1, 8 + count * RANK_RECORD.size) + b"\0" * 1024)
    hdr = recv(sock, HDR.size)
    body = recv(sock, HDR.unpack(hdr)[4])
    status, _, error = REP.unpack(body[:REP.size])
    print("begin", status, error.split(b"\0")[0].decode(), flush=True)
    return 0


def at_pid(path, pid, user, args):
    who = pwd.getpwnam(user)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        child = os.fork()
        if child == 0:
            if os.getpid() != pid:
                os._exit(3)	# another process took it: try again
            os.setgroups([])
            os.setgid(who.pw_gid)
            os.setuid(who.pw_uid)
            try:
                code = hello_and_stats(path, args)
            finally:
                sys.stdout.flush()
            os._exit(code)
        _, st = os.waitpid(child, 0)
        if os.waitstatus_to_exitcode(st) != 3:
            return os.waitstatus_to_exitcode(st)
    print(f"gos_agent: pid {pid} never came free", file=sys.stderr)
    return 3


def main(argv):
    if len(argv) >= 3 and argv[2] == "hello":
        return hello_and_stats(argv[1], argv[3:])
    if len(argv) == 4 and argv[2] == "alloc":
        return allocs(argv[1], int(argv[3]))
    if len(argv) == 4 and argv[2] == "rank":
        return rank(argv[1], argv[3])
    if len(argv) in (5, 6) and argv[2] == "big":
        return big(argv[1], int(argv[3]), int(argv[4]), int(argv[5]) if len(argv) == 6 else 0)
    if len(argv) == 4 and argv[2] == "answering":
        return answering(argv[1], int(argv[3]))
    if len(argv) in (5, 6) and argv[2] == "rank-reports":
        return rank_reports(argv[1], int(argv[3]), int(argv[4]), *[os.fsencode(a) for a in argv[5:]])
    if len(argv) == 4 and argv[2] == "hellos":
        return hellos(argv[1], int(argv[3]))
    if len(argv) == 4 and argv[2] == "hello-ranks":
        return hello_ranks(argv[1], int(argv[3]))
    if len(argv) == 4 and argv[2] == "stats-unread":
        return stats_unread(argv[1], int(argv[3]))
    if len(argv) == 4 and argv[2] == "unfinished":
        return unfinished(argv[1], int(argv[3]))
    if len(argv) == 4 and argv[2] == "begin" and argv[3] == "RANK_REPORT":
        return begin(argv[1])
    if len(argv) == 4 and argv[2] == "ranks":
        return ranks(argv[1], int(argv[3]))
    if len(argv) >= 6 and argv[2] == "at-pid" and argv[5] == "hello":
        return at_pid(argv[1], int(argv[3]), argv[4], argv[6:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
