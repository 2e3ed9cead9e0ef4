"""The server and the command line never import from the workspace they run in:
editors start servers in the workspace folder, and `python -m` puts the working
directory first on the import path, where a project's own `analysis` package
would shadow ours and be run."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.server.raw_client import PULL, RawClient

REPO = Path(__file__).resolve().parents[1]
BUG = "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"


def _workspace(tmp_path: Path) -> Path:
    for package in ("analysis", "lsprotocol"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            "import pathlib\npathlib.Path(__file__).parents[1].joinpath('IMPORTED').write_text('yes')\n"
            "raise SystemExit('the workspace was imported')\n")
    (tmp_path / "train.py").write_text(BUG)
    return tmp_path


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_check_run_in_a_workspace_with_an_analysis_package(tmp_path):
    folder = _workspace(tmp_path)
    run = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--no-cache", "train.py"],
                         cwd=folder, env=_env(), capture_output=True, text=True, timeout=120)
    assert "AG101" in run.stdout, run.stderr[-500:]
    assert not (folder / "IMPORTED").exists()


def test_server_started_in_a_workspace_with_an_analysis_package(tmp_path):
    folder = _workspace(tmp_path)
    client = RawClient(cwd=folder, env=_env())
    try:
        client.initialize(PULL)
        client.open((folder / "train.py").as_uri(), BUG)
        assert [d["code"] for d in client.pull((folder / "train.py").as_uri())] == ["AG101"]
    finally:
        assert client.close() == 0
    assert not (folder / "IMPORTED").exists()
