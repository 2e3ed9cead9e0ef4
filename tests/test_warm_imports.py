"""The command line runs the project modules that files import once, before its
workers fork, instead of once in every worker."""
from __future__ import annotations

import os

import pytest

from autograd_lsp import checking, project
from autograd_lsp.analysis import Settings
from autograd_lsp.analysis.workspace import Workspace
from tests.test_workspace import MODEL

TRAIN = (
    "import torch\n"
    "from pkg.models import (\n"
    "    Net,\n"
    ")\n"
    "Net()(torch.randn(8, 4)).backward()\n"
)


def _project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "models.py").write_text(MODEL)
    paths = []
    for number in range(2 * checking.PARALLEL_MIN_FILES):
        path = tmp_path / f"train{number:02d}.py"
        path.write_text(TRAIN)
        paths.append(path)
    return paths


def _runs_log(tmp_path, monkeypatch):
    """Every run of a project module, in any process, as a line of a file."""
    log = tmp_path / "runs.log"
    real_run = Workspace._run

    def logged(self, path, text, name):
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {os.path.basename(path)}\n")
        return real_run(self, path, text, name)

    monkeypatch.setattr(Workspace, "_run", logged)
    return log


@pytest.fixture(autouse=True)
def fresh_workspaces(monkeypatch):
    """No workspace of another test: what runs here is counted from nothing."""
    monkeypatch.setattr(project, "_WORKSPACES", {})


def test_a_parenthesised_import_is_run_before_the_workers_fork(tmp_path):
    paths = _project(tmp_path)
    checking.warm_project_imports([checking.Job(p, Settings()) for p in paths[:1]])
    assert "models.py" in {os.path.basename(p) for p in project.workspace_for(paths[0]).modules_run()}


def test_workers_inherit_the_modules_and_find_the_same(tmp_path, monkeypatch):
    paths = _project(tmp_path)
    log = _runs_log(tmp_path, monkeypatch)
    jobs = [checking.Job(p, Settings()) for p in paths]
    outcomes = checking.check_files(jobs, fix=False, cache=None, workers=2)
    assert all([f.code for f in o.findings] == ["AG101"] for o in outcomes)
    # One run of the module in all processes, as in one process.
    runs = log.read_text().splitlines()
    assert [line.split()[1] for line in runs] == ["models.py"]
    assert runs[0].split()[0] == str(os.getpid())
