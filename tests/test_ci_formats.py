"""`check` for CI: SARIF, GitHub annotations, --output-file, --exit-zero,
--statistics, --diff, and text piped through standard input."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from autograd_lsp.analysis import all_rules, analyze
from tests.test_cli import project, run  # noqa: F401 (a fixture, and the in-process runner)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"


def test_sarif_of_the_examples_validates_against_the_sarif_2_1_0_schema(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "sarif", "examples")
    assert code == 1
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} >= {rule.code for rule in all_rules()}
    ag101 = next(rule for rule in rules if rule["id"] == "AG101")
    assert ag101["name"] == "nonscalar-backward"
    assert "Bad:" in ag101["help"]["text"] and "```python" in ag101["help"]["markdown"]
    results = run_["results"]
    in_script = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                 == "examples/train_example.py"]
    core = analyze((REPO / "examples" / "train_example.py").read_text(encoding="utf-8"))
    assert [r["ruleId"] for r in in_script] == [f.code for f in core]
    assert [r["message"]["text"] for r in in_script] == [f.message for f in core]
    first = in_script[0]
    assert first["level"] == "error" and rules[first["ruleIndex"]]["id"] == "AG101"
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 29
    assert first["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == ".mean()"
    [in_notebook] = [r for r in results if r.get("properties") == {"cell": 4}]
    assert in_notebook["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "examples/gradients.ipynb"
    assert in_notebook["message"]["text"].startswith("cell 4, line 1, column 1: ")


def test_sarif_with_no_findings_is_valid_too(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    code, out, _ = run(capsys, "check", "--format", "sarif", "ok.py")
    assert code == 0
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []


def test_github_format_prints_workflow_commands(project, capsys):
    (project / "bad, file.py").write_text(NONSCALAR)
    code, out, err = run(capsys, "check", "--format", "github", "bad, file.py")
    assert code == 1
    assert out.splitlines() == [
        "::error file=bad%2C file.py,line=4,col=1,endLine=4,endColumn=13,"
        "title=AG101 [nonscalar-backward]::`y` has shape (3,), not a scalar: backward() raises "
        "RuntimeError: grad can be implicitly created only for scalar outputs"]


def test_output_file_holds_what_stdout_would(project, capsys):
    (project / "bad.py").write_text(NONSCALAR)
    code, out, _ = run(capsys, "check", "--format", "json", "--output-file", "report.json", "bad.py")
    assert (code, out) == (1, "")
    [item] = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert item["code"] == "AG101"


def test_exit_zero_keeps_errors_as_errors(project, capsys):
    (project / "bad.py").write_text(NONSCALAR)
    assert run(capsys, "check", "--exit-zero", "bad.py")[0] == 0
    assert run(capsys, "check", "--exit-zero", "bad.py", "missing.py")[0] == 2


def test_statistics_count_per_rule(project, capsys):
    (project / "a.py").write_text(NONSCALAR)
    (project / "b.py").write_text(NONSCALAR + "z = x.detach()\nz.requires_grad = True\nw = x * 3\nw.backward()\n")
    code, out, _ = run(capsys, "check", "--statistics", ".")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["3", "AG101", "nonscalar-backward"]


def test_diff_shows_the_fix_and_changes_nothing(project, capsys):
    path = project / "bad.py"
    path.write_text(NONSCALAR)
    code, out, err = run(capsys, "check", "--diff", "bad.py")
    assert code == 1
    assert path.read_text() == NONSCALAR
    assert "--- bad.py\n+++ bad.py\n" in out
    assert "-y.backward()\n+y.mean().backward()\n" in out
    assert "Would fix 1 problem in 1 file." in err
    path.write_text(CLEAN)
    assert run(capsys, "check", "--diff", "bad.py")[:2] == (0, "")


def test_diff_of_a_notebook_names_the_cell(project, capsys):
    shutil.copy(REPO / "examples" / "gradients.ipynb", project / "nb.ipynb")
    before = (project / "nb.ipynb").read_bytes()
    code, out, _ = run(capsys, "check", "--diff", "nb.ipynb")
    assert code == 1 and (project / "nb.ipynb").read_bytes() == before
    assert out.startswith("--- nb.ipynb:cell 4\n+++ nb.ipynb:cell 4\n")
    assert "+y.mean().backward()" in out


def test_fix_and_diff_exclude_each_other(project, capsys):
    assert run(capsys, "check", "--fix", "--diff", ".")[0] == 2


def stdin_run(project: Path, *argv: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograd_lsp", "check", *argv], input=text,
                          capture_output=True, text=True, cwd=project,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})


def test_stdin_with_a_filename(project):
    result = stdin_run(project, "-", "--stdin-filename", "pkg/train.py", text=NONSCALAR)
    assert result.returncode == 1
    assert result.stdout.startswith("pkg/train.py:4:1: AG101 [nonscalar-backward]")


def test_stdin_fix_prints_the_fixed_text(project):
    result = stdin_run(project, "-", "--fix", text=NONSCALAR)
    assert result.returncode == 0, result.stderr
    assert result.stdout == NONSCALAR.replace("y.backward()", "y.mean().backward()")
    assert "fixed AG101" in result.stderr


def test_stdin_uses_the_configuration_of_the_named_file(project):
    (project / "pyproject.toml").write_text('[tool.autograd-lsp]\nignore = ["AG101"]\n')
    result = stdin_run(project, "-", "--stdin-filename", "train.py", text=NONSCALAR)
    assert (result.returncode, result.stdout) == (0, "")


def test_stdin_notebook(project):
    text = (REPO / "examples" / "gradients.ipynb").read_text(encoding="utf-8")
    result = stdin_run(project, "-", "--stdin-filename", "nb.ipynb", "--format", "json", text=text)
    assert result.returncode == 1
    assert [(i["cell"], i["code"]) for i in json.loads(result.stdout)] == [(4, "AG101")]
