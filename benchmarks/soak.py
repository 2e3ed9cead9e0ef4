"""Memory of the language server over a long editing session.

Opens the ~2,000-line training file in a pull client and sends 10,000
incremental changes to it (typing a comment character on a function line, then
deleting it again, so the text stays the same size), pulling diagnostics every
`--pull-every` changes as an editor does. Prints the server's resident set size
(RSS, from /proc) every 1,000 changes, and the growth from the first reading
after warm-up to the last: flat means at most 10%.

    python benchmarks/soak.py [--edits 10000] [--pull-every 50]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_client import PULL_CAPABILITIES, Client  # noqa: E402
from server_latency import SERVER, body_lines, server_env  # noqa: E402
from training_file import build  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--pull-every", type=int, default=50)
    parser.add_argument("--report-every", type=int, default=1_000)
    args = parser.parse_args()

    source = build()
    rows = body_lines(source)
    lines = source.split("\n")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        client = Client(SERVER, env=server_env(0), cwd=str(root))
        client.initialize(PULL_CAPABILITIES, root)
        uri = (root / "train.py").as_uri()
        client.open(uri, source, 0)
        client.pull(uri)
        readings = [(0, client.rss_mb())]
        print(f"{'edits':>7} {'RSS MB':>8}")
        print(f"{0:>7} {readings[0][1]:>8.1f}")
        started = time.perf_counter()
        version = 0
        for edit in range(1, args.edits + 1):
            row = rows[(edit // 2) % len(rows)]
            end = len(lines[row])
            version += 1
            if edit % 2:
                client.change(uri, version, row, end, end, "#")
            else:
                client.change(uri, version, row, end, end + 1, "")
            if edit % args.pull_every == 0:
                client.pull(uri)
            if edit % args.report_every == 0:
                client.pull(uri)
                readings.append((edit, client.rss_mb()))
                print(f"{edit:>7} {readings[-1][1]:>8.1f}", flush=True)
        elapsed = time.perf_counter() - started
        client.close()
    warm = readings[1][1] if len(readings) > 2 else readings[0][1]
    growth = (readings[-1][1] - warm) / warm * 100
    print(f"growth after warm-up (from {readings[1][0] if len(readings) > 2 else 0} edits): "
          f"{growth:+.1f}%  ({args.edits} edits in {elapsed:.0f} s)")
    return 0 if growth <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
