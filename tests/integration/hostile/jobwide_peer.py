#!/usr/bin/python3
"""A peer of gpuoversubd's job-wide door (docs/jobwide.md, "The channel"),
for the hostile-neighbour suite: raw frames on TCP, no MUNGE, runnable by
any user. Every check it provokes comes before MUNGE. The frame: "GOSJ",
version 1, kind 1, node length (u16), job (u32), credential length (u32),
little-endian (common/jobwide/frame.hpp), then the node and the credential.

  jobwide_peer.py PORT frame [--from ADDR] [--job N]
      One valid frame (node n1, a printable credential) for job N (4242);
      prints the answer line, or "closed" if none came within 10 s.
  jobwide_peer.py PORT raw HEX [--from ADDR]
      Sends the bytes HEX and prints the answer line as frame does.
  jobwide_peer.py PORT oversize [--from ADDR] [--cred N]
      Sends only a header whose credential length is N (20480: a 20 KiB
      frame), never its body; prints the answer line, then "eof" if the door closed
      the connection within 10 s after it (else "open").
  jobwide_peer.py PORT slow [--from ADDR]
      Sends a valid frame's header, prints "ready", then one byte of its
      body a second until the door closes the connection; prints "closed
      after S" (seconds since the header, one decimal) and any answer, or
      "open after S" if 30 s pass.
  jobwide_peer.py PORT hold N [--from ADDR[,ADDR...]] [--probe ADDR]
      Opens N connections, spread over the ADDRs, sending nothing; with
      --probe, then sends a valid frame from ADDR on one more and prints
      "probe ANSWER" (while the N are open: the door closes those it
      admitted after 5 s, the probe comes within milliseconds). Reads
      until each is closed by the door (at most 15 s), then prints
      "answers busy=B silent=S open=O other=X": answered busy, closed with
      no answer (the door's 5 s for a frame), still open, answered anything
      else. Then prints "held" and keeps every socket until stdin closes.
  jobwide_peer.py PORT flood SECONDS [--from ADDR[,ADDR...]]
      For SECONDS: keeps up to 300 connections open over the ADDRs, and
      opens, sends garbage on and closes others as fast as it can; prints
      "flooded N" (connections opened) at the end.
  jobwide_peer.py PORT squat [--answer LINE]
      Holds PORT itself, on every address (as a user may while gpuoversubd
      restarts: issue 50), prints "squatting PID", and answers each connection
      LINE ("ok") until killed.
Connections go to 127.0.0.1, from ADDR (any 127.x.y.z) when given, and,
with --reserved (root), from a port below 1024, as gpuoversubd's senders
do: the door refuses a peer from any other port at once (unreserved_port).
"""
import os
import select
import socket
import struct
import sys
import time

HOST = "127.0.0.1"


def header(node_len, job, cred_len, magic=b"GOSJ", version=1, kind=1):
	return magic + struct.pack("<BBHII", version, kind, node_len, job, cred_len)


def frame(job, node=b"n1", cred=b"cred"):
	return header(len(node), job, len(cred)) + node + cred


RESERVED = "--reserved" in sys.argv


def bind_reserved(s, src):
	"""A free port below 1024, as bindresvport(3) finds one."""
	for port in range(600, 1024):
		try:
			s.bind((src or "0.0.0.0", port))
			return
		except OSError:
			continue
	sys.exit("no reserved port is free")


def connect(port, src=None, block=True):
	s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
	if RESERVED:
		bind_reserved(s, src)
	elif src:
		s.bind((src, 0))
	s.settimeout(10 if block else None)
	s.connect((HOST, port))
	return s


def answer(s, limit=10):
	"""The answer line, or "closed" if the door closed with none (or none came)."""
	s.settimeout(limit)
	data = b""
	try:
		while not data.endswith(b"\n"):
			got = s.recv(256)
			if not got:
				break
			data += got
	except (socket.timeout, ConnectionResetError):
		pass
	return data.decode(errors="replace").strip() or "closed"


def option(args, name, default=None):
	if name in args:
		return args[args.index(name) + 1]
	return default


def main():
	port, mode, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
	src = option(args, "--from")
	srcs = src.split(",") if src else [None]
	if mode == "frame":
		s = connect(port, src)
		s.sendall(frame(int(option(args, "--job", "4242"))))
		print(answer(s))
	elif mode == "raw":
		s = connect(port, src)
		s.sendall(bytes.fromhex(args[0]))
		print(answer(s))
	elif mode == "oversize":
		s = connect(port, src)
		s.sendall(header(2, 4242, int(option(args, "--cred", "20480"))))
		print(answer(s))
		s.settimeout(10)
		try:
			print("eof" if s.recv(1) == b"" else "open")
		except ConnectionResetError:
			print("eof")
		except socket.timeout:
			print("open")
	elif mode == "slow":
		s = connect(port, src)
		body = b"n1" + b"c" * 64
		s.sendall(header(2, 4242, 64))
		start = time.monotonic()
		print("ready", flush=True)
		data, closed = b"", False
		for i in range(30):
			r, _, _ = select.select([s], [], [], 1)
			if r:
				try:
					got = s.recv(256)
				except ConnectionResetError:
					got = b""
				if not got:
					closed = True
					break
				data += got
			try:
				s.send(body[i:i + 1])
			except (BrokenPipeError, ConnectionResetError):
				closed = True
				break
		took = time.monotonic() - start
		print(("closed" if closed else "open") + " after %.1f" % took, data.decode(errors="replace").strip(), flush=True)
	elif mode == "hold":
		n = int(args[0])
		socks = [connect(port, srcs[i % len(srcs)]) for i in range(n)]
		probe = option(args, "--probe")
		if probe:
			p = connect(port, probe)
			p.sendall(frame(4242))
			print("probe " + answer(p), flush=True)
		for s in socks:
			s.setblocking(False)
		got = {s: b"" for s in socks}
		done = set()
		end = time.monotonic() + 15
		while len(done) < n and time.monotonic() < end:
			r, _, _ = select.select([s for s in socks if s not in done], [], [], 0.5)
			for s in r:
				try:
					data = s.recv(256)
				except ConnectionResetError:
					data = b""
				if data:
					got[s] += data
				else:
					done.add(s)
		tally = {"busy": 0, "silent": 0, "open": 0, "other": 0}
		for s in socks:
			text = got[s].decode(errors="replace").strip()
			if s not in done:
				tally["open"] += 1
			elif text == "busy":
				tally["busy"] += 1
			elif not text:
				tally["silent"] += 1
			else:
				tally["other"] += 1
		print("answers busy=%(busy)d silent=%(silent)d open=%(open)d other=%(other)d" % tally, flush=True)
		print("held", flush=True)
		sys.stdin.read()
	elif mode == "flood":
		end = time.monotonic() + float(args[0])
		held, opened, i = [], 0, 0
		while time.monotonic() < end:
			i += 1
			try:
				s = connect(port, srcs[i % len(srcs)], block=True)
				opened += 1
			except OSError:
				continue
			if len(held) < 300:
				held.append(s)
			else:
				try:
					s.sendall(b"\xff" * 16)
				except OSError:
					pass
				s.close()
		print("flooded %d" % opened, flush=True)
	elif mode == "squat":
		line = option(args, "--answer", "ok") + "\n"
		sq = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
		sq.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		sq.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
		sq.bind(("::", port))
		sq.listen(64)
		print("squatting %d" % os.getpid(), flush=True)
		while True:
			c, _ = sq.accept()
			try:
				c.sendall(line.encode())
			except OSError:
				pass
			c.close()
	else:
		sys.exit("unknown mode " + mode)


if __name__ == "__main__":
	main()
