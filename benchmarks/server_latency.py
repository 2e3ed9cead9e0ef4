"""Latency of the language server on the ~2,000-line training file, in one run.

Starts `python -m autograd_lsp.server` over stdio with a small JSON-RPC client
(benchmarks/lsp_client.py), opens the file and sends one-character didChange
edits inside functions (incremental sync), timing each edit until diagnostics
for that version arrive:

- push: didChange -> publishDiagnostics with the edit's version, default settings;
- pull: didChange + textDocument/diagnostic -> the report (no debounce applies);
- cold open -> first diagnostics, a syntax-breaking edit and its repair, and
  start-up (process start -> diagnostics of a small file).

One full `libcst.parse_module` of the file is measured in the same run, and
`ruff server` on the same file and edits when ruff is installed.

    python benchmarks/server_latency.py [--edits 300] [--no-ruff]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from lsp_client import PULL_CAPABILITIES, PUSH_CAPABILITIES, Client  # noqa: E402
from training_file import build  # noqa: E402

SERVER = [sys.executable, "-m", "autograd_lsp.server"]
SMALL_FILE = ("import torch\n"
              "x = torch.randn(3, requires_grad=True)\n"
              "y = x * 2\n"
              "y.backward()\n")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def summary(values: list[float]) -> str:
    return (f"p50 {statistics.median(values):7.2f} ms  p95 {percentile(values, 0.95):7.2f} ms  "
            f"max {max(values):7.2f} ms  (n={len(values)})")


def server_env(debounce_ms: float | None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if debounce_ms is not None:
        env["AUTOGRAD_LSP_DEBOUNCE_MS"] = str(debounce_ms)
    return env


# -- edits ----------------------------------------------------------------------------------

def body_lines(source: str) -> list[int]:
    """0-based numbers of indented, non-blank lines inside `def`s and classes."""
    rows, inside = [], False
    for row, line in enumerate(source.split("\n")):
        if line.startswith(("def ", "class ")):
            inside = True
        elif line[:1] not in (" ", "\t", "", "#"):
            inside = False
        if inside and line.startswith("    ") and line.strip() and not line.rstrip().endswith("\\"):
            rows.append(row)
    return rows


def typing_edits(source: str, count: int, rng: random.Random) -> list[tuple[int, int, str]]:
    """(line, column, inserted character): typing a comment at the end of function
    lines, one character per change, moving to another line now and then."""
    lines = source.split("\n")
    rows = body_lines(source)
    edits: list[tuple[int, int, str]] = []
    row = column = None
    while len(edits) < count:
        if row is None:
            row = rng.choice(rows)
            column = len(lines[row])
            edits.append((row, column, "#"))
            column += 1
            lines[row] += "#"
            continue
        edits.append((row, column, "x"))
        lines[row] += "x"
        column += 1
        if rng.random() < 0.1:
            row = None
    return edits


# -- one server session ------------------------------------------------------------------------

class Session:
    def __init__(self, command: list[str], capabilities: dict, env: dict, root: Path,
                 options=None):
        self.client = Client(command, env=env, cwd=str(root))
        self.client.initialize(capabilities, root, options)
        self.pull = "diagnostic" in capabilities["textDocument"]
        self.version = 0

    def diagnostics(self, uri: str) -> float:
        """Seconds until diagnostics of the current version are there."""
        if self.pull:
            self.client.pull(uri)
        else:
            self.client.diagnostics_for(uri, self.version)
        return time.perf_counter()

    def open(self, uri: str, text: str) -> float:
        self.version = 0
        sent = self.client.open(uri, text, self.version)
        return (self.diagnostics(uri) - sent) * 1000

    def edit(self, uri: str, row: int, column: int, end_column: int, text: str) -> float:
        self.version += 1
        sent = self.client.change(uri, self.version, row, column, end_column, text)
        return (self.diagnostics(uri) - sent) * 1000

    def close(self) -> None:
        self.client.close()


def measure_server(command, capabilities, env, root, source, edits, syntax_rows,
                   options=None) -> dict:
    session = Session(command, capabilities, env, root, options)
    uri = (root / "train.py").as_uri()
    figures = {"open": session.open(uri, source)}
    figures["edits"] = [session.edit(uri, row, column, column, char) for row, column, char in edits]
    lines = source.split("\n")
    breaks, repairs = [], []
    for row in syntax_rows:
        end = len(lines[row])          # rows the typing edits never touch
        breaks.append(session.edit(uri, row, end, end, " + ("))
        repairs.append(session.edit(uri, row, end, end + 4, ""))
    figures["syntax"] = breaks
    figures["repair"] = repairs
    session.close()
    return figures


def startup(command, capabilities, env, root) -> float:
    """Process start to the first diagnostics of a small file, in ms (median of 3)."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        session = Session(command, capabilities, env, root)
        uri = (root / "small.py").as_uri()
        session.client.open(uri, SMALL_FILE, 0)
        times.append((session.diagnostics(uri) - started) * 1000)
        session.close()
    return statistics.median(times)


def full_parse_ms(source: str) -> float:
    import libcst
    times = []
    for _ in range(5):
        started = time.perf_counter()
        libcst.parse_module(source)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def report(label: str, figures: dict, parse: float, subtract: float = 0.0) -> float:
    edits = [t - subtract for t in figures["edits"]]
    print(f"  {label}")
    print(f"    cold open -> diagnostics: {figures['open']:8.1f} ms  ({figures['open'] / parse:.2f}x parse)")
    print(f"    one-character edit:       {summary(edits)}")
    print(f"    syntax-breaking edit:     {summary([t - subtract for t in figures['syntax']])}")
    print(f"    repairing it:             {summary([t - subtract for t in figures['repair']])}")
    return statistics.median(edits)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--no-ruff", action="store_true")
    args = parser.parse_args(argv)

    source = build()
    rng = random.Random(5)
    edits = typing_edits(source, args.edits, rng)
    syntax_rows = rng.sample(sorted(set(body_lines(source)) - {r for r, _, _ in edits}), 10)
    root = Path(tempfile.mkdtemp(prefix="agl-bench-"))
    (root / "train.py").write_text(source)
    (root / "small.py").write_text(SMALL_FILE)

    parse = full_parse_ms(source)
    print(f"file: {source.count(chr(10))} lines; machine: {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    print(f"libcst.parse_module of the whole file: {parse:.1f} ms (median of 5)\n")

    from autograd_lsp.server.documents import DEBOUNCE_SECONDS
    print(f"autograd-lsp server (default debounce {DEBOUNCE_SECONDS * 1000:.0f} ms)")
    start_ms = startup(SERVER, PUSH_CAPABILITIES, server_env(None), root)
    print(f"  start-up (process start -> diagnostics of a 4-line file): {start_ms:.0f} ms "
          f"(target <= 500)")
    results = {}
    results["push"] = measure_server(SERVER, PUSH_CAPABILITIES, server_env(None), root, source, edits,
                                     syntax_rows)
    push_p50 = report("push, default settings", results["push"], parse)
    results["pull"] = measure_server(SERVER, PULL_CAPABILITIES, server_env(None), root, source, edits,
                                     syntax_rows)
    pull_p50 = report("pull (textDocument/diagnostic after each change)", results["pull"], parse)

    ruff_push_p50 = ruff_pull_p50 = None
    ruff = shutil.which("ruff")
    if not args.no_ruff:
        if ruff is None:
            print("\nruff server: not installed (pip install ruff), not measured")
        else:
            ruff_command = [ruff, "server"]
            print(f"\nruff server ({_ruff_version(ruff)}), same client, file and edits")
            ruff_push = measure_server(ruff_command, PUSH_CAPABILITIES, dict(os.environ), root, source,
                                       edits, syntax_rows)
            ruff_push_p50 = report("push", ruff_push, parse)
            ruff_pull = measure_server(ruff_command, PULL_CAPABILITIES, dict(os.environ), root, source,
                                       edits, syntax_rows)
            ruff_pull_p50 = report("pull", ruff_pull, parse)

    print("\ntargets")
    print(f"  push p50, default settings <= 10 ms: {push_p50:.2f} ms (pull {pull_p50:.2f})")
    p95 = percentile(results["push"]["edits"], 0.95)
    print(f"  push p95 <= 30 ms:                   {p95:.2f} ms")
    print(f"  push p50 / full parse <= 0.067:      {push_p50 / parse:.3f}")
    cold = min(results["push"]["open"], results["pull"]["open"])
    print(f"  cold open / full parse <= 1.5:       {cold / parse:.2f}")
    print(f"  start-up <= 500 ms:                  {start_ms:.0f} ms")
    if ruff_push_p50:
        print(f"  push p50 / ruff server push p50 <= 3: {push_p50 / ruff_push_p50:.1f}")
        print(f"  pull p50 / ruff server pull p50:      {pull_p50 / ruff_pull_p50:.1f}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


def _ruff_version(ruff: str) -> str:
    import subprocess
    return subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
