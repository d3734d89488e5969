#!/usr/bin/env python3
"""results_section.py PATH NAME TEXT: puts TEXT between the NAME markers of
bench/RESULTS.md (<!-- NAME:begin --> ... <!-- NAME:end -->), replacing what
was there, or adds the section before "## On a GPU" (after it for bench_gpu)."""
import re
import sys

path, name, text = sys.argv[1:4]
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
section = f"{begin}\n{text}\n{end}"
body = open(path).read()
if begin in body:
    body = re.sub(re.escape(begin) + ".*" + re.escape(end), lambda _: section, body, flags=re.S)
elif name == "bench_gpu":
    body = body.rstrip("\n") + "\n\n## On a GPU\n\n" + section + "\n"
else:
    body = body.replace("\n## On a GPU", "\n" + section + "\n\n## On a GPU", 1)
open(path, "w").write(body)
