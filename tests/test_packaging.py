"""The package as users install and run it: a wheel that installs no top-level
`analysis`, a command line that works from any folder (also one holding its own
`analysis.py`), from the repository root, and editable; `--version` and
`--help` without the analyser."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
# What a user's own `analysis` module might be: importing it must never happen.
IMPOSTOR = "raise SystemExit('the user\\'s own analysis.py was imported')\n"


def _clean_env(**extra) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def user_folder(tmp_path: Path) -> Path:
    """A project folder with its own `analysis.py` and `analysis/` package."""
    folder = tmp_path / "project"
    (folder / "analysis").mkdir(parents=True)
    (folder / "analysis.py").write_text(IMPOSTOR)
    (folder / "analysis" / "__init__.py").write_text(IMPOSTOR)
    (folder / "train.py").write_text(NONSCALAR)
    return folder


def test_version_and_help_do_not_load_the_analyser():
    code = ("import sys\n"
            "from autograd_lsp.cli import main\n"
            "assert main(['--version']) == 0\n"
            "assert main(['check', '--help']) == 0\n"
            "assert main(['--help']) == 0\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('libcst', 'analysis', 'pygls')"
            " or m.startswith('autograd_lsp.analysis'))\n"
            "assert not loaded, loaded\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("autograd-lsp 0.1.0\n")


def test_the_editable_install_works_from_a_folder_with_its_own_analysis(tmp_path):
    folder = user_folder(tmp_path)
    result = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", "train.py"],
                            capture_output=True, text=True, cwd=folder, env=_clean_env())
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("train.py:4:1: AG101 [nonscalar-backward]")


@pytest.fixture(scope="module")
def source_tree(tmp_path_factory) -> Path:
    """A copy of the working tree to build from: setuptools builds in the source
    folder, and a `build/` left in the repository would let removed modules live
    on in later wheels."""
    copy = tmp_path_factory.mktemp("source") / "autograd-lsp"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".ci-venv", "build", "dist", "node_modules", "__pycache__", "*.egg-info",
        ".autograd_lsp_cache", ".pytest_cache", ".hypothesis"))
    return copy


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, source_tree) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source_tree)],
                   check=True, capture_output=True, cwd=out)
    [built] = out.glob("autograd_lsp-*.whl")
    return built


def test_the_wheel_holds_no_top_level_analysis(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"autograd_lsp"}
    assert "autograd_lsp/analysis/engine.py" in names
    assert "autograd_lsp/analysis/rules/nonscalar_backward.py" in names
    metadata = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("METADATA"))
    assert "License-Expression: MIT" in metadata


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment with only the wheel and its dependencies."""
    home = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=True).create(home)
    python = home / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, env=_clean_env())
    return home


def test_a_fresh_install_puts_no_analysis_on_the_path(fresh_venv, tmp_path):
    python = fresh_venv / "bin" / "python"
    result = subprocess.run(
        [str(python), "-c", "import importlib.util, autograd_lsp.analysis as a; "
                            "print(importlib.util.find_spec('analysis'), a.__name__)"],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env())
    assert result.stdout.split() == ["None", "autograd_lsp.analysis"], result.stderr


@pytest.mark.parametrize("command", [["bin/autograd-lsp"], ["bin/python", "-m", "autograd_lsp"]])
def test_a_fresh_install_checks_from_a_folder_with_its_own_analysis(fresh_venv, tmp_path, command):
    folder = user_folder(tmp_path)
    argv = [str(fresh_venv / command[0]), *command[1:], "check", "--no-cache", "train.py"]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=folder, env=_clean_env())
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("train.py:4:1: AG101 [nonscalar-backward]")


def test_a_fresh_install_runs_from_the_repository_root(fresh_venv):
    # `python -m` puts the current folder first: the checkout's autograd_lsp/ is
    # imported, and finds its core in the checkout's analysis/ folder.
    result = subprocess.run([str(fresh_venv / "bin" / "python"), "-m", "autograd_lsp", "check",
                             "--no-cache", "examples/train_example.py"],
                            capture_output=True, text=True, cwd=REPO, env=_clean_env())
    assert result.returncode == 1, result.stderr
    assert "examples/train_example.py:29:5: AG101" in result.stdout


def test_the_sdist_holds_what_its_tests_need(tmp_path, source_tree):
    subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(source_tree)],
                   check=True, capture_output=True)
    [sdist] = tmp_path.glob("autograd_lsp-*.tar.gz")
    names = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    for needed in ("LICENSE", "CHANGELOG.md", "README.md", "analysis/engine.py", "autograd_lsp/cli.py",
                   "tests/test_cli.py", "tests/data/sarif-schema-2.1.0.json", "examples/train_example.py",
                   "examples/gradients.ipynb"):
        assert needed in names, needed

