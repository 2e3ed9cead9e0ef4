"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself on a scratch
repository (pre-commit installs this repository into its own environment)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    # Shared, so that pre-commit builds the hooks' environment once.
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def scratch(tmp_path, pre_commit_home) -> tuple[Path, dict]:
    repo = tmp_path / "scratch"
    repo.mkdir()
    (repo / "bad.py").write_text(NONSCALAR)
    (repo / "clean.py").write_text(CLEAN)
    (repo / "notes.txt").write_text("y.backward()\n")
    shutil.copy(REPO / "examples" / "gradients.ipynb", repo / "nb.ipynb")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PRE_COMMIT_HOME=str(pre_commit_home), GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid")
    for command in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(command, cwd=repo, check=True, env=env)
    return repo, env


def try_hook(repo: Path, env: dict, hook: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


def test_the_check_hook_reports_python_files_and_notebooks(scratch):
    repo, env = scratch
    result = try_hook(repo, env, "autograd-lsp")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bad.py:4:1: AG101 [nonscalar-backward]" in result.stdout
    assert "nb.ipynb:cell 4:1:1: AG101 [nonscalar-backward]" in result.stdout
    assert "clean.py" not in result.stdout and "notes.txt" not in result.stdout


def test_the_fix_hook_fixes(scratch):
    repo, env = scratch
    result = try_hook(repo, env, "autograd-lsp-fix")
    # pre-commit fails a hook that changed files, so that the fix gets reviewed.
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    assert (repo / "bad.py").read_text() == NONSCALAR.replace("y.backward()", "y.mean().backward()")
    assert "y.mean().backward()" in (repo / "nb.ipynb").read_text()
