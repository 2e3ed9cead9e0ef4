"""Memory of the language server with many large files open, and how much work
a burst of changes causes.

Opens 100 variants of the ~2,000-line training file (push client), waits for
the diagnostics of each, and prints the server's resident set size (RSS, from
/proc). Then sends a burst of 50 one-character changes to one document without
waiting, and asks the server (request `autograd-lsp/stats`) how many analyses
the burst caused: at most one per document is the target, with the default
debounce; with the debounce set to 0, the figure shows how many intermediate
versions were skipped.

    python benchmarks/memory.py [--files 100] [--burst 50]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_client import PUSH_CAPABILITIES, Client  # noqa: E402
from server_latency import SERVER, body_lines, server_env  # noqa: E402
from training_file import build  # noqa: E402

TARGET_MB = 150


def variant(source: str, number: int) -> str:
    """A different file of the same size: other names, so no chunk text repeats."""
    return (source.replace("Classifier", f"Classifier{number}")
                  .replace("def ", f"def v{number}_")
                  .replace("HIDDEN", f"HIDDEN_{number}"))


def burst(client: Client, uri: str, source: str, count: int, first_version: int) -> tuple:
    """Send `count` changes at once; (analyses they caused, ms to the last version's
    diagnostics, most analyses ever waiting at once for that document)."""
    before = client.call("autograd-lsp/stats", None)["result"]["analyses"].get(uri, 0)
    lines = source.split("\n")
    row = body_lines(source)[len(body_lines(source)) // 2]
    column = len(lines[row])
    started = time.perf_counter()
    version = first_version
    for offset in range(count):
        version += 1
        client.change(uri, version, row, column + offset, column + offset, "#" if offset == 0 else "x")
    client.diagnostics_for(uri, version)
    elapsed = (time.perf_counter() - started) * 1000
    time.sleep(0.5)   # anything still queued would run now
    stats = client.call("autograd-lsp/stats", None)["result"]
    queued = stats["maxWaiting"].get(uri, 0)
    return stats["analyses"].get(uri, 0) - before, elapsed, queued


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args(argv)

    source = build()
    root = Path(tempfile.mkdtemp(prefix="agl-memory-"))
    client = Client(SERVER, env=server_env(None), cwd=str(root))
    client.initialize(PUSH_CAPABILITIES, root)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"server RSS after start-up:                 {client.rss_mb():6.1f} MB")

    uris = []
    started = time.perf_counter()
    for number in range(args.files):
        text = variant(source, number)
        uri = (root / f"train_{number:03d}.py").as_uri()
        uris.append(uri)
        client.open(uri, text)
        client.diagnostics_for(uri, 0, timeout=120)
    opened = time.perf_counter() - started
    rss = client.rss_mb()
    print(f"server RSS with {args.files} files of {source.count(chr(10))} lines open: "
          f"{rss:6.1f} MB  (target <= {TARGET_MB}; opened in {opened:.1f} s)")

    text = variant(source, 0)
    analyses, elapsed, queued = burst(client, uris[0], text, args.burst, 0)
    print(f"burst of {args.burst} changes, default debounce: {analyses} analysis(es) of that document, "
          f"at most {queued} queued at once (target: at most 1); last version's diagnostics "
          f"after {elapsed:.0f} ms")
    print(f"server RSS after the burst:                {client.rss_mb():6.1f} MB")
    client.close()

    client = Client(SERVER, env=server_env(0), cwd=str(root))
    client.initialize(PUSH_CAPABILITIES, root)
    client.open(uris[0], text)
    client.diagnostics_for(uris[0], 0)
    analyses, elapsed, queued = burst(client, uris[0], text, args.burst, 0)
    print(f"burst of {args.burst} changes, debounce 0:       {analyses} analyses of that document "
          f"(each of the newest version then), at most {queued} queued at once; last version's "
          f"diagnostics after {elapsed:.0f} ms")
    client.close()
    shutil.rmtree(root, ignore_errors=True)
    return 0 if rss <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
