"""The command line's results cache, parallel checking and progress line."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lsp.analysis import Finding, Fix, Settings, TextEdit
from autograd_lsp import cache as cache_module
from autograd_lsp import checking, cli
from autograd_lsp.cache import CACHE_FOLDER, ResultsCache, finding_from_json, finding_to_json
from autograd_lsp.cli import main
from autograd_lsp.progress import Progress

NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
CLEAN = ("import torch\n"
         "x = torch.randn(3, requires_grad=True)\n"
         "(x * 2).sum().backward()\n")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def analyses(monkeypatch):
    """Counts the files the core analyses (in this process)."""
    seen: list[str] = []
    real = cli.Analyzer.analyze

    def counting(self, source, settings=None, **options):
        seen.append(source)
        return real(self, source, settings, **options)

    monkeypatch.setattr(cli.Analyzer, "analyze", counting)
    return seen


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def entries(project: Path) -> list[Path]:
    return sorted((project / CACHE_FOLDER).rglob("*.json"))


# -- hits and misses -----------------------------------------------------------------------

def test_second_run_is_served_from_the_cache(project, capsys, analyses):
    (project / "train.py").write_text(NONSCALAR)
    first = run(capsys, "check", "train.py")
    assert len(analyses) == 1
    second = run(capsys, "check", "train.py")
    assert len(analyses) == 1, "the second run analysed again"
    assert first == second
    assert first[0] == 1 and "train.py:4:1: AG101" in first[1]


def test_cache_folder_is_ignored_by_git(project, capsys):
    (project / "train.py").write_text(NONSCALAR)
    run(capsys, "check", "train.py")
    assert (project / CACHE_FOLDER / ".gitignore").read_text().splitlines()[-1] == "*"
    assert len(entries(project)) == 1


def test_cache_lives_at_the_project_root(project, capsys, monkeypatch):
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "sub" / "train.py").write_text(NONSCALAR)
    monkeypatch.chdir(project / "pkg" / "sub")
    run(capsys, "check", "train.py")
    assert (project / CACHE_FOLDER).is_dir()
    assert not (project / "pkg" / "sub" / CACHE_FOLDER).exists()


def test_changed_content_misses(project, capsys, analyses):
    path = project / "train.py"
    path.write_text(NONSCALAR)
    run(capsys, "check", "train.py")
    path.write_text(CLEAN)
    code, out, _ = run(capsys, "check", "train.py")
    assert len(analyses) == 2
    assert (code, out) == (0, "")


@pytest.mark.parametrize("flags", [["--ignore", "AG101"], ["--select", "AG2"], ["--locale", "zh"]])
def test_changed_settings_miss(project, capsys, analyses, flags):
    (project / "train.py").write_text(NONSCALAR)
    run(capsys, "check", "train.py")
    code, out, _ = run(capsys, "check", *flags, "train.py")
    assert len(analyses) == 2
    fresh = run(capsys, "check", "--no-cache", *flags, "train.py")
    assert (code, out) == fresh[:2]


def test_changed_severity_in_pyproject_misses(project, capsys, analyses):
    (project / "train.py").write_text(NONSCALAR)
    run(capsys, "check", "--format", "json", "train.py")
    (project / "pyproject.toml").write_text(
        "[tool.autograd-lsp.severity]\nnonscalar-backward = \"info\"\n")
    _, out, _ = run(capsys, "check", "--format", "json", "train.py")
    assert len(analyses) == 2
    assert json.loads(out)[0]["severity"] == "info"


def test_another_tool_version_misses(project, capsys, analyses, monkeypatch):
    (project / "train.py").write_text(NONSCALAR)
    run(capsys, "check", "train.py")
    monkeypatch.setattr(cache_module, "tool_fingerprint", lambda: "9.9.9-other")
    run(capsys, "check", "train.py")
    assert len(analyses) == 2


def test_no_cache_neither_reads_nor_writes(project, capsys, analyses):
    (project / "train.py").write_text(NONSCALAR)
    run(capsys, "check", "--no-cache", "train.py")
    assert not (project / CACHE_FOLDER).exists()
    run(capsys, "check", "train.py")
    run(capsys, "check", "--no-cache", "train.py")
    assert len(analyses) == 3


# -- a broken cache is never fatal -----------------------------------------------------------

@pytest.mark.parametrize("garbage", [b"", b"{not json", b"\xff\xfe", b'{"findings": [[1, 2]]}',
                                     b'{"findings": [["AG101", "n", "error", "m", "1", 0, 1, 1, []]]}',
                                     b"[]"])
def test_corrupt_entry_is_a_miss(project, capsys, analyses, garbage):
    (project / "train.py").write_text(NONSCALAR)
    expected = run(capsys, "check", "train.py")
    for entry in entries(project):
        entry.write_bytes(garbage)
    assert run(capsys, "check", "train.py") == expected
    assert len(analyses) == 2
    # ... and the entry is rewritten whole.
    run(capsys, "check", "train.py")
    assert len(analyses) == 2


def test_unwritable_cache_folder_is_skipped(project, capsys):
    (project / CACHE_FOLDER).write_text("a file where the folder should be")
    (project / "train.py").write_text(NONSCALAR)
    code, out, err = run(capsys, "check", "train.py")
    assert code == 1 and "AG101" in out and "error" not in err.lower()


def test_findings_round_trip_through_json():
    finding = Finding("AG101", "nonscalar-backward", "error", "梯度 🔥", 4, 0, 4, 12,
                      (Fix("Reduce with .sum()", (TextEdit(4, 0, 4, 1, "y.sum()\n"),), True),
                       Fix("unsafe", (), False)))
    assert finding_from_json(json.loads(json.dumps(finding_to_json(finding)))) == finding


def test_keys_differ_by_text_settings_and_fingerprint(tmp_path):
    a, b = ResultsCache(tmp_path, "1"), ResultsCache(tmp_path, "2")
    settings = Settings()
    assert a.key("x", settings) == a.key("x", settings)
    assert len({a.key("x", settings), a.key("y", settings), b.key("x", settings),
                a.key("x", Settings.build(locale="zh")),
                a.key("x", Settings.build(severities={"AG1": "info"}))}) == 5


# -- parallel runs ---------------------------------------------------------------------------

def _many_files(project: Path, count: int) -> None:
    for number in range(count):
        folder = project / f"pkg{number % 3}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{number:02d}.py").write_text(NONSCALAR if number % 2 else CLEAN)


@pytest.mark.parametrize("format", ["text", "json"])
def test_parallel_output_equals_serial_output_sorted_by_path(project, capsys, monkeypatch, format):
    _many_files(project, 3 * checking.PARALLEL_MIN_FILES)
    monkeypatch.setattr(checking, "available_cores", lambda: 1)
    serial = run(capsys, "check", "--no-cache", "--format", format, "pkg2", "pkg0", "pkg1")
    monkeypatch.setattr(checking, "available_cores", lambda: 4)
    parallel = run(capsys, "check", "--no-cache", "--format", format, "pkg2", "pkg0", "pkg1")
    assert parallel == serial
    if format == "text":
        paths = [line.split(":")[0] for line in serial[1].splitlines()]
    else:
        paths = [item["path"] for item in json.loads(serial[1])]
    assert len(paths) == 3 * checking.PARALLEL_MIN_FILES // 2
    assert paths == sorted(paths, key=Path)


def test_parallel_run_fills_and_uses_the_cache(project, capsys, monkeypatch):
    _many_files(project, 2 * checking.PARALLEL_MIN_FILES)
    monkeypatch.setattr(checking, "available_cores", lambda: 2)
    cold = run(capsys, "check", ".")
    # Entries are by content: the files have two different texts.
    assert len(entries(project)) == 2
    assert run(capsys, "check", ".") == cold


def test_parallel_fix_fixes_every_file(project, capsys, monkeypatch):
    _many_files(project, 2 * checking.PARALLEL_MIN_FILES)
    monkeypatch.setattr(checking, "available_cores", lambda: 2)
    code, out, _ = run(capsys, "check", "--fix", ".")
    assert out.count("fixed AG101") == checking.PARALLEL_MIN_FILES
    assert run(capsys, "check", ".")[1] == ""


# -- progress ----------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_shows_on_a_terminal_for_long_runs_and_is_cleared():
    clock, stream = Clock(), Terminal()
    progress = Progress(100, stream, clock=clock)
    progress.advance()
    assert stream.getvalue() == ""          # quick runs look as before
    clock.now = 1.0
    progress.advance()
    assert "Checked 2/100 files" in stream.getvalue()
    progress.clear()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_progress_never_shows_when_piped():
    clock, stream = Clock(), io.StringIO()
    progress = Progress(100, stream, clock=clock)
    clock.now = 5.0
    for _ in range(100):
        progress.advance()
    progress.clear()
    assert stream.getvalue() == ""


def test_piped_check_has_no_carriage_returns(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    _many_files(tmp_path, 12)
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", "."],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert done.returncode == 1
    assert "\r" not in done.stderr and "\r" not in done.stdout
