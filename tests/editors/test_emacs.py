"""Emacs 28 with eglot (Debian's emacs-nox and elpa-eglot), set up with the
shipped editors/emacs/autograd-lsp.el and running in batch mode against the
installed `autograd-lsp`: diagnostics, a plaintext hover (no markdown-mode
here), a quick fix, a project setting, and a clean exit."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.editors.projects import REPO, editor_env, make_project, require

DRIVER = Path(__file__).with_name("eglot_driver.el")


def test_emacs_eglot_with_the_shipped_file(tmp_path):
    emacs = require(shutil.which("emacs"), "Emacs with eglot (apt-get install emacs-nox elpa-eglot)")
    project = make_project(tmp_path)
    out = tmp_path / "results.json"
    env = editor_env(tmp_path, AG_FILE=str(project.file), AG_OUT=str(out),
                     AG_EL=str(REPO / "editors" / "emacs" / "autograd-lsp.el"),
                     AG_HOVER_LINE=str(project.hover_line), AG_HOVER_CHARACTER=str(project.hover_column))
    run = subprocess.run([emacs, "--batch", "-l", str(DRIVER)], env=env, cwd=project.folder,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert out.exists(), run.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in results, (results, run.stderr[-3000:])

    assert results["major_mode"] == "python-mode"
    codes = sorted(d["code"] for d in results["first"])
    assert codes == project.codes, results["first"]   # pyproject.toml ignores AG302
    ag101 = next(d for d in results["first"] if d["code"] == "AG101")
    assert ag101["message"] == project.ag101_message
    assert ag101["range"]["start"] == {"line": project.hover_line, "character": project.hover_column}

    # Eglot without markdown-mode takes plaintext only: no raw Markdown in the popup.
    assert results["hover_kind"] == "plaintext"
    assert f"{project.receiver}: what autograd-lsp knows at this point" in results["hover"]
    assert "`" not in results["hover"]

    assert results["action_title"] == f"{project.ag101_fix_title} (AG101)"
    assert results["fixed_line"] == project.fixed_line
    after = sorted(d["code"] for d in results["after_fix"])
    assert after == [code for code in project.codes if code != "AG101"]
    assert results["exit_code"] == 0
