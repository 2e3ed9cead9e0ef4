"""`autograd-lsp check` on real repositories against `ruff` and `torchfix`, in one run.

For each repository the same list of Python files (the ones `check` would
discover) is given to every tool explicitly. autograd-lsp runs three times:
cold cache (an empty cache folder), warm cache (the same folder again) and
`--no-cache`. Prints files, lines, wall seconds (median of `--repeat` runs),
the ratios torchfix / autograd-lsp, and CPU seconds (the processes and their
workers) of `check --no-cache` against `ruff check --select ALL --no-cache`.

    python benchmarks/cli_speed.py [REPO ...] [--torchfix PATH] [--ruff PATH] [--baseline DIR]

REPO defaults to the clones under /tmp/real. `--baseline DIR` also times the
command line of another checkout (e.g. an older commit unpacked with
`git archive`), cold, for before/after figures. torchfix pins libcst < 1.6, so
install it in a virtual environment of its own:
`python -m venv /tmp/torchfix-venv && /tmp/torchfix-venv/bin/pip install torchfix`.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograd_lsp.sources import discover  # noqa: E402

DEFAULT_REPOS = ["karpathy+nanoGPT", "karpathy+minGPT", "yunjey+pytorch-tutorial",
                 "eriklindernoren+PyTorch-GAN", "openai+spinningup", "pytorch+examples",
                 "DLR-RM+stable-baselines3", "d2l-ai+d2l-en"]


def env_for(checkout: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    return env


def timed(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int]:
    elapsed, _, returncode = timed_cpu(command, cwd, env)
    return elapsed, returncode


def timed_cpu(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process and the workers it waited for, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode not in (0, 1):
        tail = done.stderr.strip().splitlines()[-1:] or ["?"]
        print(f"    ! {command[0]} exited with {done.returncode}: {tail[0][:200]}")
    return elapsed, cpu, done.returncode


def median_of(repeat: int, run) -> float:
    return statistics.median(run() for _ in range(repeat))


def find_torchfix(given: str | None) -> str | None:
    for candidate in (given, "/tmp/torchfix-venv/bin/torchfix", shutil.which("torchfix")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def find_ruff(given: str | None) -> str | None:
    for candidate in (given, shutil.which("ruff"), "/tmp/ruff-venv/bin/ruff"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path)
    parser.add_argument("--torchfix", help="the torchfix executable")
    parser.add_argument("--ruff", help="the ruff executable")
    parser.add_argument("--baseline", type=Path, help="another checkout's command line to time too")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    repos = args.repos or [Path("/tmp/real") / name for name in DEFAULT_REPOS
                           if (Path("/tmp/real") / name).is_dir()]
    torchfix = find_torchfix(args.torchfix)
    ruff = find_ruff(args.ruff)
    check = [sys.executable, "-m", "autograd_lsp", "check"]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; "
          f"median of {args.repeat} runs; seconds")
    if torchfix is None:
        print("torchfix: not found (pip install torchfix in its own venv); not measured")
    header = f"{'repository':32} {'files':>5} {'lines':>7} {'cold':>6} {'warm':>6} {'no-cache':>8}"
    header += f" {'torchfix':>8} {'tf/cold':>7} {'tf/nocache':>10}" if torchfix else ""
    header += f" {'baseline':>8}" if args.baseline else ""
    header += f" {'cpu':>7} {'ruff cpu':>8} {'cpu/ruff':>8}" if ruff else ""
    print(header)
    totals = {"files": 0, "lines": 0, "cold": 0.0, "warm": 0.0, "nocache": 0.0, "torchfix": 0.0,
              "baseline": 0.0, "cpu": 0.0, "ruff_cpu": 0.0}
    for repo in repos:
        files = [str(path.relative_to(repo)) for path, missing in discover([str(repo)], lambda p: False)
                 if missing is None]
        if not files:
            continue
        lines = sum(len((repo / f).read_bytes().splitlines()) for f in files)
        cache = Path(tempfile.mkdtemp(prefix="agl-cache-"))

        def cold():
            shutil.rmtree(cache, ignore_errors=True)
            return timed(check + ["--cache-dir", str(cache), *files], repo, env_for(REPO))[0]

        row = {"cold": median_of(args.repeat, cold)}
        row["warm"] = median_of(args.repeat, lambda: timed(
            check + ["--cache-dir", str(cache), *files], repo, env_for(REPO))[0])
        row["nocache"] = median_of(args.repeat, lambda: timed(
            check + ["--no-cache", *files], repo, env_for(REPO))[0])
        shutil.rmtree(cache, ignore_errors=True)
        text = (f"{repo.name:32} {len(files):5d} {lines:7d} {row['cold']:6.2f} {row['warm']:6.2f} "
                f"{row['nocache']:8.2f}")
        if torchfix:
            # torchfix is slow; one run each keeps the benchmark within minutes.
            row["torchfix"] = timed([torchfix, *files], repo)[0]
            text += (f" {row['torchfix']:8.2f} {row['torchfix'] / row['cold']:7.1f}"
                     f" {row['torchfix'] / row['nocache']:10.1f}")
        if args.baseline:
            row["baseline"] = timed(check + files, repo, env_for(args.baseline))[0]
            text += f" {row['baseline']:8.2f}"
        if ruff:
            row["cpu"] = timed_cpu(check + ["--no-cache", *files], repo, env_for(REPO))[1]
            row["ruff_cpu"] = timed_cpu([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero",
                                         "--quiet", *files], repo)[1]
            text += f" {row['cpu']:7.2f} {row['ruff_cpu']:8.2f} {row['cpu'] / max(row['ruff_cpu'], 1e-3):8.1f}"
        print(text, flush=True)
        totals["files"] += len(files)
        totals["lines"] += lines
        for key, value in row.items():
            totals[key] += value
    text = (f"{'total':32} {totals['files']:5d} {totals['lines']:7d} {totals['cold']:6.2f} "
            f"{totals['warm']:6.2f} {totals['nocache']:8.2f}")
    if torchfix:
        text += (f" {totals['torchfix']:8.2f} {totals['torchfix'] / totals['cold']:7.1f}"
                 f" {totals['torchfix'] / totals['nocache']:10.1f}")
    if args.baseline:
        text += f" {totals['baseline']:8.2f}"
    if ruff:
        text += (f" {totals['cpu']:7.2f} {totals['ruff_cpu']:8.2f}"
                 f" {totals['cpu'] / max(totals['ruff_cpu'], 1e-3):8.1f}")
    print(text)
    if ruff:
        print(f"\ntarget: CPU of check --no-cache <= 8x ruff check --select ALL --no-cache: "
              f"{totals['cpu'] / max(totals['ruff_cpu'], 1e-3):.1f}x")
    if torchfix:
        print(f"\ntarget: torchfix / autograd-lsp >= 10 on the same files: "
              f"cold cache {totals['torchfix'] / totals['cold']:.1f}x, "
              f"warm cache {totals['torchfix'] / totals['warm']:.1f}x, "
              f"--no-cache {totals['torchfix'] / totals['nocache']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
