"""The command line against hostile input: a worker that dies, files the parser
must not see, unreadable folders, odd codings, a tampered cache, escape
sequences in messages, a cache folder that is the project itself, and a file
edited while `--fix` works on it."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lsp import cache as cache_module
from autograd_lsp import checking, cli
from tests.test_cli import project, run  # noqa: F401 - the same fixture and runner

NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"
CRASH, NOT_CHECKED = 3, 2


# -- crashes --------------------------------------------------------------------------

_REAL_CHECK_ONE = checking.check_one


def _dying_on_m05(path, *args, **kwargs):
    # Module level, so that the pool can send it to its workers by name.
    if path.name == "m05.py":
        os.kill(os.getpid(), signal.SIGSEGV)
    return _REAL_CHECK_ONE(path, *args, **kwargs)


def test_a_dead_worker_costs_only_its_own_file(project, capsys, monkeypatch):
    for number in range(2 * checking.PARALLEL_MIN_FILES):
        (project / f"m{number:02d}.py").write_text(NONSCALAR)
    (project / "m05.py").write_text(NONSCALAR + "# die here\n")
    # Forked workers see the replacement too.
    monkeypatch.setattr(checking, "check_one", _dying_on_m05)
    monkeypatch.setattr(checking, "available_cores", lambda: 2)
    code, out, err = run(capsys, "check", "--no-cache", ".")
    assert code == CRASH
    assert out.count("AG101") == 2 * checking.PARALLEL_MIN_FILES - 1
    assert "m05.py" not in out
    assert "m05.py: error: not checked: the analysis crashed (SIGSEGV)" in err
    assert "Traceback" not in err


def test_an_internal_error_in_one_rule_is_said_and_the_others_still_report(project, capsys, monkeypatch):
    from autograd_lsp.analysis import all_rules

    def broken(self, trace, locale):
        raise AttributeError("'RangeValue' object has no attribute 'oid'")

    victim = next(rule for rule in all_rules() if rule.name != "nonscalar-backward")
    monkeypatch.setattr(type(victim), "check", broken)
    (project / "train.py").write_text(NONSCALAR)
    code, out, err = run(capsys, "check", "--no-cache", "train.py")
    assert "AG101" in out
    assert f"train.py: note: part of this file was not analysed after an internal error " \
           f"({victim.name}: AttributeError: 'RangeValue' object has no attribute 'oid'); please report it" in err


def test_a_file_the_parser_must_not_see_is_reported_as_not_checked(project, capsys):
    chain = "x = 0\nif x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n"
                                                     for i in range(1, 10_000))
    (project / "chain.py").write_text(NONSCALAR + chain)
    code, out, err = run(capsys, "check", "--no-cache", "chain.py")
    assert "chain.py:4:1: AG101" in out
    assert "chain.py:2408: error: not checked: an if statement has more than 1,200 elif branches" in err
    assert code == NOT_CHECKED


# -- reading -----------------------------------------------------------------------------

def test_an_unreadable_folder_is_reported(project, capsys, monkeypatch):
    (project / "ok.py").write_text(CLEAN)
    locked = project / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(NONSCALAR)
    real_scandir = os.scandir

    def refusing(path="."):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    # os.walk lists folders with os.scandir; root would read a chmod 000 folder anyway.
    monkeypatch.setattr(os, "scandir", refusing)
    code, _, err = run(capsys, "check", "--no-cache", ".")
    assert "locked: error: cannot read folder: Permission denied" in err
    assert code == NOT_CHECKED


def test_a_coding_cookie_that_is_not_a_text_encoding(project, capsys):
    (project / "r.py").write_bytes(b"# -*- coding: rot13 -*-\nvzcbeg gbepu\n")
    code, _, err = run(capsys, "check", "--no-cache", "r.py")
    assert code == NOT_CHECKED
    assert "r.py: error: cannot decode: rot13 is not a text encoding" in err
    assert "internal error" not in err


# -- output -----------------------------------------------------------------------------

def test_control_characters_never_reach_the_terminal(project, capsys):
    name = "e\x1b[2Jvil.py"
    (project / name).write_text(NONSCALAR)
    code, out, err = run(capsys, "check", "--no-cache", name)
    assert code == 1
    assert "\x1b" not in out + err and "e[2Jvil.py:4:1: AG101" in out


# -- the cache --------------------------------------------------------------------------

def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json"))


def test_a_hand_made_entry_does_not_hide_findings(project, capsys):
    (project / "a.py").write_text(NONSCALAR)
    run(capsys, "check", "a.py")
    for entry in _entries(project / ".autograd_lsp_cache"):
        entry.write_text(json.dumps({"findings": []}))
    code, out, _ = run(capsys, "check", "a.py")
    assert code == 1 and "AG101" in out


def test_a_tampered_message_is_not_trusted(project, capsys):
    (project / "a.py").write_text(NONSCALAR)
    run(capsys, "check", "a.py")
    for entry in _entries(project / ".autograd_lsp_cache"):
        data = json.loads(entry.read_text())
        data["findings"][0][1] = "\x1b]0;owned\x07made-up"
        entry.write_text(json.dumps(data))
    code, out, err = run(capsys, "check", "a.py")
    assert code == 1 and "[nonscalar-backward]" in out and "\x1b" not in out + err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep-json", "huge"])
def test_odd_entries_are_misses(project, capsys, kind):
    (project / "a.py").write_text(NONSCALAR)
    run(capsys, "check", "a.py")
    [entry] = _entries(project / ".autograd_lsp_cache")
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif kind == "deep-json":
        entry.write_text("[" * 100_000 + "]" * 100_000)
    else:
        entry.write_text(json.dumps({"findings": [], "pad": "x" * (cache_module.MAX_ENTRY_BYTES + 1)}))
    # In a child with a timeout: a FIFO would hang the reader forever.
    run_ = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "a.py"], cwd=project,
                          capture_output=True, text=True, timeout=60)
    assert run_.returncode == 1 and "AG101" in run_.stdout, run_.stderr[-400:]


def test_cache_dir_in_an_existing_folder_writes_no_gitignore_there(project, capsys):
    (project / "a.py").write_text(NONSCALAR)
    run(capsys, "check", "--cache-dir", ".", "a.py")
    assert not (project / ".gitignore").exists()
    # What the tool made for itself is still kept out of git.
    [made] = [p for p in project.iterdir() if p.is_dir()]
    assert (made / ".gitignore").read_text().strip().endswith("*")


def test_the_default_cache_folder_is_still_ignored_by_git(project, capsys):
    (project / "a.py").write_text(NONSCALAR)
    run(capsys, "check", "a.py")
    assert (project / ".autograd_lsp_cache" / ".gitignore").exists()


# -- --fix ------------------------------------------------------------------------------

def test_fix_does_not_overwrite_a_change_made_meanwhile(project, capsys, monkeypatch):
    path = project / "a.py"
    path.write_text(NONSCALAR)
    real = checking.fix_text

    def slow_fix(text, settings, **kwargs):
        result = real(text, settings, **kwargs)
        path.write_text(NONSCALAR + "# typed while the fix ran\n")
        return result

    monkeypatch.setattr(checking, "fix_text", slow_fix)
    code, out, err = run(capsys, "check", "--fix", "--no-cache", "a.py")
    assert path.read_text().endswith("# typed while the fix ran\n")
    assert "changed while it was being fixed" in err
    assert code == NOT_CHECKED


@pytest.mark.parametrize("encoding, bom, newline", [
    ("utf-8", b"\xef\xbb\xbf", "\r\n"), ("latin-1", b"", "\r"), ("utf-8", b"", "\n")])
def test_fix_keeps_encoding_bom_and_line_endings(project, capsys, encoding, bom, newline):
    cookie = f"# -*- coding: {encoding} -*-\n" if encoding != "utf-8" else ""
    text = (cookie + "# caf\u00e9\n" + NONSCALAR).replace("\n", newline)
    path = project / "a.py"
    path.write_bytes(bom + text.encode(encoding))
    mode = 0o640
    path.chmod(mode)
    code, out, _ = run(capsys, "check", "--fix", "--no-cache", "a.py")
    data = path.read_bytes()
    assert data.startswith(bom)
    fixed = data[len(bom):].decode(encoding)
    assert "y.mean().backward()" in fixed or "y.sum().backward()" in fixed
    assert fixed.count(newline) == text.count(newline)
    if newline != "\n":
        assert "\n" not in fixed.replace(newline, "")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in project.iterdir() if p.name.startswith("a.py")] == ["a.py"]


def test_python_s_own_syntax_warnings_do_not_leak(project):
    (project / "w.py").write_text('import torch\nx = 1\nif x is 1:\n    pass\ns = "\\d"\n')
    for flags in ([], ["--fix"]):
        run_ = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", *flags, "w.py"],
                              cwd=project, capture_output=True, text=True, timeout=60)
        assert "Warning" not in run_.stderr, run_.stderr
