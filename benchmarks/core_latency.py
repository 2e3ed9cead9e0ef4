"""Latency of the analysis core on a ~2,000-line training file, in one run.

Prints: one `libcst.parse_module` of the whole file; a cold
`Analyzer().analyze`; one-character edits inside functions with a long-lived
Analyzer (p50/p95/max); syntax-breaking edits and their repairs; and the
ratios issue 5 sets targets on (edit p50 vs one full parse; cold vs one full
parse). Medians over repetitions, so one slow run does not decide a figure.

    python benchmarks/core_latency.py [--edits 200] [--repeat 5] [--file PATH]
                                      [--kind training|trainer]

`--kind trainer` measures the generated file of classes, a Trainer and helpers
(`trainer_file.py`), where the analysis follows calls through objects.
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import libcst as cst  # noqa: E402

from autograd_lsp.analysis.engine import Analyzer  # noqa: E402
from autograd_lsp.startup import settle  # noqa: E402
import trainer_file  # noqa: E402
import training_file  # noqa: E402


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _median_ms(fn, repeat: int) -> float:
    return statistics.median(_timed(fn) for _ in range(repeat))


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def _body_positions(source: str) -> list[int]:
    """Offsets inside indented lines of function bodies, where an edit stays in one def."""
    positions = []
    offset = 0
    inside_def = False
    for line in source.splitlines(keepends=True):
        if line.startswith(("def ", "class ")):
            inside_def = True
        elif line[:1] not in (" ", "\t", "\n", "#"):
            inside_def = False
        if inside_def and line.startswith("    ") and line.strip():
            indent = len(line) - len(line.lstrip())
            positions.append(offset + indent + (len(line.strip()) // 2))
        offset += len(line)
    return positions


def _char_edits(source: str, count: int, rng: random.Random) -> list[str]:
    """Successive versions: each inserts or deletes one character inside a function,
    the way typing and backspacing do (a comment character keeps the code valid)."""
    positions = _body_positions(source)
    versions = []
    text = source
    pending = None
    for _ in range(count):
        if pending is None:
            pos = rng.choice(positions)
            pos = text.index("\n", pos)          # end of that line
            text = text[:pos] + " #" + text[pos:]
            pending = pos + 2
        else:
            text = text[:pending] + "x" + text[pending:]
            pending += 1
            if rng.random() < 0.1:
                pending = None
        versions.append(text)
    return versions


def _syntax_edits(source: str, count: int, rng: random.Random) -> list[str]:
    """Alternately break a function (an unclosed bracket) and repair it."""
    positions = _body_positions(source)
    versions = []
    for _ in range(count // 2):
        pos = source.index("\n", rng.choice(positions))
        versions.append(source[:pos] + " + (" + source[pos:])
        versions.append(source)
    return versions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--file", type=Path, help="analyse this file instead of the generated one")
    parser.add_argument("--kind", choices=("training", "trainer"), default="training",
                        help="which generated file: a flat training script, or classes and a Trainer")
    args = parser.parse_args(argv)

    generator = trainer_file if args.kind == "trainer" else training_file
    source = args.file.read_text() if args.file else generator.build()
    lines = source.count("\n")
    rng = random.Random(5)
    gc.collect()
    # The collector as the server and the command line set it after their imports.
    settle()

    parse = _median_ms(lambda: cst.parse_module(source), args.repeat)
    cold = _median_ms(lambda: Analyzer().analyze(source), args.repeat)
    findings = Analyzer().analyze(source)

    analyzer = Analyzer()
    analyzer.analyze(source)
    edit_times = [_timed(lambda v=v: analyzer.analyze(v)) for v in _char_edits(source, args.edits, rng)]
    syntax_times = [_timed(lambda v=v: analyzer.analyze(v)) for v in _syntax_edits(source, 40, rng)]

    p50 = statistics.median(edit_times)
    print(f"file: {lines} lines, {len(source)} characters, {len(findings)} findings")
    print(f"libcst.parse_module, whole file:   {parse:8.1f} ms")
    print(f"cold Analyzer().analyze:           {cold:8.1f} ms")
    print(f"one-character edit in a function:  p50 {p50:.2f} ms  p95 {_percentile(edit_times, 0.95):.2f} ms"
          f"  max {max(edit_times):.2f} ms  ({len(edit_times)} edits)")
    print(f"syntax-breaking edit / repair:     p50 {statistics.median(syntax_times):.2f} ms"
          f"  p95 {_percentile(syntax_times, 0.95):.2f} ms  max {max(syntax_times):.2f} ms")
    print(f"edit p50 / full parse:             {p50 / parse:8.3f}  (target <= 1/15 = 0.067)")
    print(f"cold / full parse:                 {cold / parse:8.2f}  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
