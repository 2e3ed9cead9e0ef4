"""The `autograd-lsp` command line, mostly in-process through `main(argv)`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from autograd_lsp.analysis import Finding, Fix, TextEdit, analyze, rule_by_key
from autograd_lsp import cli
from autograd_lsp.cli import main
from autograd_lsp.fixing import fix_text

NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")
# A Chinese comment and an emoji before the finding on its line: columns count code points.
NONSCALAR_CJK = ("import torch\n"
                 "x = torch.randn(3, requires_grad=True)  # 输入 🙂\n"
                 "y = x * 2\n"
                 "备注 = \"梯度🔥\"; y.backward()\n")
CJK_COLUMN = NONSCALAR_CJK.splitlines()[3].index("y.backward()") + 1   # 1-based
CLEAN = ("import torch\n"
         "x = torch.randn(3, requires_grad=True)\n"
         "(x * 2).sum().backward()\n")
JSON_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity",
             "message", "fixes"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder as the working directory (its own pyproject.toml keeps
    any configuration above the temporary folder out)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def codes_in(text: str) -> set[str]:
    return {f.code for f in analyze(text)}


# -- check: exit codes and formats ---------------------------------------------------------

def test_clean_file_exits_0(project, capsys):
    write(project, "clean.py", CLEAN)
    code, out, err = run(capsys, "check", "clean.py")
    assert (code, out) == (0, "")
    assert "No problems found" in err


def test_text_format_has_1_based_code_point_columns(project, capsys):
    write(project, "cjk.py", NONSCALAR_CJK)
    code, out, _ = run(capsys, "check", "cjk.py")
    assert code == 1
    assert out.startswith(f"cjk.py:4:{CJK_COLUMN}: AG101 [nonscalar-backward] ")
    assert "not a scalar" in out


def test_json_format(project, capsys):
    write(project, "cjk.py", NONSCALAR_CJK)
    code, out, _ = run(capsys, "check", "--format", "json", "cjk.py")
    assert code == 1
    [item] = [i for i in json.loads(out) if i["code"] == "AG101"]
    assert set(item) == JSON_KEYS
    assert item["path"] == "cjk.py"
    assert (item["line"], item["column"]) == (4, CJK_COLUMN)
    assert (item["end_line"], item["end_column"]) == (4, CJK_COLUMN + len("y.backward()"))
    assert (item["name"], item["severity"]) == ("nonscalar-backward", "error")
    assert item["fixes"]
    for fix in item["fixes"]:
        assert set(fix) == {"title", "edits"}
        for edit in fix["edits"]:
            assert set(edit) == {"line", "column", "end_line", "end_column", "new_text"}
    sum_fix = next(f for f in item["fixes"] if ".sum()" in f["title"])
    # The insertion goes right after `y`, 1-based.
    assert sum_fix["edits"] == [{"line": 4, "column": CJK_COLUMN + 1, "end_line": 4,
                                 "end_column": CJK_COLUMN + 1, "new_text": ".sum()"}]


def test_json_of_a_clean_run_is_an_empty_list(project, capsys):
    write(project, "clean.py", CLEAN)
    code, out, _ = run(capsys, "check", "--format", "json", "clean.py")
    assert (code, json.loads(out)) == (0, [])


@pytest.mark.parametrize("flags, reported", [
    ([], True),
    (["--select", "AG1"], True),
    (["--select", "ag10"], True),
    (["--select", "nonscalar-backward"], True),
    (["--select", "AG2"], False),
    (["--select", "AG9,AG1"], True),
    (["--ignore", "AG1"], False),
    (["--ignore", "nonscalar-backward"], False),
    (["--ignore", "AG2"], True),
    (["--select", "AG1", "--ignore", "AG101"], False),
])
def test_select_and_ignore(project, capsys, flags, reported):
    write(project, "bad.py", NONSCALAR)
    code, out, _ = run(capsys, "check", *flags, "bad.py")
    assert ("AG101" in out) is reported
    assert code == (1 if out else 0)


def test_unknown_rule_in_select_is_a_usage_error(project, capsys):
    write(project, "bad.py", NONSCALAR)
    code, out, err = run(capsys, "check", "--select", "nonscalar-backwrd", "bad.py")
    assert (code, out) == (2, "")
    assert "unknown rule 'nonscalar-backwrd'" in err


def test_locale_zh_translates_messages(project, capsys):
    write(project, "bad.py", NONSCALAR)
    _, out, _ = run(capsys, "check", "--locale", "zh", "bad.py")
    assert "不是标量" in out


# -- check: paths and folders ---------------------------------------------------------------

def test_folders_are_walked_and_tool_folders_skipped(project, capsys):
    write(project, "src/train.py", NONSCALAR)
    write(project, "src/deep/more.py", NONSCALAR)
    write(project, "src/notes.txt", NONSCALAR)
    for skipped in (".venv", "venv", "__pycache__", "build", "node_modules", ".tox", ".git"):
        write(project, f"{skipped}/lib.py", NONSCALAR)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert sorted(line.split(":")[0] for line in out.splitlines()) == [
        "src/deep/more.py", "src/train.py"]


def test_paths_are_printed_as_given(project, capsys):
    write(project, "src/train.py", NONSCALAR)
    _, out, _ = run(capsys, "check", "src")
    assert out.startswith("src/train.py:4:1:")
    absolute = str(project / "src" / "train.py")
    _, out, _ = run(capsys, "check", absolute)
    assert out.startswith(f"{absolute}:4:1:")


def test_configured_exclude_and_ignore(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.autograd-lsp]\nexclude = ["generated"]\nseverity = { AG101 = "warning" }\n')
    write(project, "generated/model.py", NONSCALAR)
    write(project, "train.py", NONSCALAR)
    code, out, _ = run(capsys, "check", "--format", "json")
    items = json.loads(out)
    assert [(i["path"], i["severity"]) for i in items if i["code"] == "AG101"] == [("train.py", "warning")]
    assert code == 1


def test_each_file_follows_its_nearest_configuration(project, capsys):
    (project / "pyproject.toml").write_text('[tool.autograd-lsp]\nexclude = ["vendored"]\n')
    write(project, "vendored/pyproject.toml", "")
    write(project, "vendored/lib.py", NONSCALAR)
    write(project, "quiet/pyproject.toml", '[tool.autograd-lsp]\nignore = ["AG101"]\n')
    write(project, "quiet/train.py", NONSCALAR)
    write(project, "train.py", NONSCALAR)
    _, out, _ = run(capsys, "check")
    assert [line.split(":")[0] for line in out.splitlines() if "AG101" in line] == ["train.py"]


def test_command_line_flags_override_the_configuration(project, capsys):
    (project / "pyproject.toml").write_text('[tool.autograd-lsp]\nignore = ["AG101"]\n')
    write(project, "train.py", NONSCALAR)
    assert run(capsys, "check", "train.py")[0] == 0
    code, out, _ = run(capsys, "check", "--ignore", "", "train.py")
    assert code == 1 and "AG101" in out


def test_malformed_configuration_exits_2(project, capsys):
    (project / "pyproject.toml").write_text('[tool.autograd-lsp]\nlocale = "fr"\n')
    write(project, "train.py", NONSCALAR)
    code, out, err = run(capsys, "check", "train.py")
    assert (code, out) == (2, "")
    assert "pyproject.toml" in err and "tool.autograd-lsp.locale" in err
    assert "Traceback" not in err


# -- check: bad input never stops the run ------------------------------------------------

def test_missing_path_is_reported_and_the_rest_checked(project, capsys):
    write(project, "bad.py", NONSCALAR)
    code, out, err = run(capsys, "check", "nowhere.py", "bad.py")
    assert code == 2
    assert "nowhere.py: error: no such file or folder" in err
    assert "bad.py:4:1: AG101" in out


@pytest.mark.parametrize("content, reason", [
    (b"x = '\xff\xfe caf\xe9'\n", "not valid UTF-8"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
])
def test_undecodable_files_are_reported_and_the_rest_checked(project, capsys, content, reason):
    write(project, "a_bad_input.py", content)
    write(project, "b_train.py", NONSCALAR)
    code, out, err = run(capsys, "check", ".")
    assert code == 2
    assert f"a_bad_input.py: error: {reason}" in err
    assert len(err.strip().splitlines()) == 2      # the error and the summary, no traceback
    assert "b_train.py:4:1: AG101" in out


def test_unreadable_file_is_reported(project, capsys, monkeypatch):
    locked = write(project, "locked.py", NONSCALAR)
    write(project, "open.py", NONSCALAR)
    real_read_bytes = Path.read_bytes

    def read_bytes(self):
        if self.name == locked.name:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    code, out, err = run(capsys, "check", ".")
    assert code == 2
    assert "locked.py: error: cannot read: Permission denied" in err
    assert "open.py:4:1: AG101" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_skipped_not_read(project, capsys):
    # Reading it would block forever.
    os.mkfifo(project / "pipe.py")
    write(project, "train.py", NONSCALAR)
    code, out, err = run(capsys, "check", ".")
    assert code == 2
    assert "pipe.py: error: not a regular file" in err
    assert "train.py:4:1: AG101" in out


def test_a_declared_coding_is_honoured(project, capsys):
    write(project, "latin.py", "# -*- coding: latin-1 -*-\n# café\n".encode("latin-1") + NONSCALAR.encode())
    code, out, _ = run(capsys, "check", "latin.py")
    assert code == 1 and "latin.py:6:1: AG101" in out


def test_syntax_error_is_a_finding_and_other_files_still_report(project, capsys):
    write(project, "broken.py", "import torch\ndef f(:\n    pass\n")
    write(project, "train.py", NONSCALAR)
    code, out, err = run(capsys, "check", "--format", "json", ".")
    assert code == 1
    items = json.loads(out)
    assert {(i["path"], i["code"], i["name"]) for i in items} >= {
        ("broken.py", "AG001", "syntax-error"), ("train.py", "AG101", "nonscalar-backward")}
    assert "Traceback" not in err


def test_an_analysis_crash_is_reported_not_raised(project, capsys, monkeypatch):
    write(project, "train.py", NONSCALAR)

    def crash(self, source, settings=None, **options):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(cli.Analyzer, "analyze", crash)
    code, _, err = run(capsys, "check", "train.py")
    # 3, not 1 ("problems found") nor 2 (a file that cannot be read): CI tells them apart.
    assert code == cli.CRASH == 3
    assert "train.py: error: internal error while analysing (RecursionError" in err


# -- check --fix ---------------------------------------------------------------------------

def test_fix_edits_the_file_in_place(project, capsys):
    path = write(project, "cjk.py", NONSCALAR_CJK)
    code, out, _ = run(capsys, "check", "--fix", "cjk.py")
    fixed = path.read_text(encoding="utf-8")
    assert fixed != NONSCALAR_CJK
    assert f"cjk.py:4:{CJK_COLUMN}: fixed AG101 [nonscalar-backward]" in out
    compile(fixed, "cjk.py", "exec")
    assert "AG101" not in codes_in(fixed)
    assert "# 输入 🙂" in fixed and "备注 = \"梯度🔥\";" in fixed
    assert code == (1 if analyze(fixed) else 0)
    # A second run finds nothing more to fix.
    assert run(capsys, "check", "--fix", "cjk.py")[1].count("fixed") == 0
    assert path.read_text(encoding="utf-8") == fixed


def test_fix_fixes_what_check_finds_through_a_project_import(project, capsys):
    # The model's output shape is known only from models.py: --fix must read it as
    # check does, or it leaves the finding check reports.
    write(project, "models.py", "import torch.nn as nn\n"
                                "class Net(nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.fc = nn.Linear(4, 1)\n"
                                "    def forward(self, x):\n"
                                "        return self.fc(x)\n")
    train = write(project, "train.py", "import torch\n"
                                       "from models import Net\n"
                                       "model = Net()\n"
                                       "out = model(torch.randn(8, 4))\n"
                                       "out.backward()\n")
    code, out, _ = run(capsys, "check", "--no-cache", "train.py")
    assert code == 1 and "train.py:5:1: AG101" in out
    code, out, _ = run(capsys, "check", "--no-cache", "--fix", "train.py")
    assert "fixed AG101" in out
    assert "out.mean().backward()" in train.read_text(encoding="utf-8")


def test_fix_keeps_crlf_line_endings(project, capsys):
    path = write(project, "crlf.py", NONSCALAR.replace("\n", "\r\n").encode())
    run(capsys, "check", "--fix", "crlf.py")
    data = path.read_bytes()
    assert data.count(b"\r\n") == 4 and b".backward()" in data
    assert "AG101" not in codes_in(data.decode())


def test_lines_inserted_by_a_fix_get_the_file_line_ending():
    adds_a_line = Fix("add", (TextEdit(2, 0, 2, 0, "z = 0\n"),))
    result = fix_text("x = 1\r\ny = 2\r\n", None, analyzer=OneFindingAnalyzer(adds_a_line))
    assert result.text.startswith("x = 1\r\nz = 0\r\n")
    assert "\n" not in result.text.replace("\r\n", "")


def test_fix_with_json_keeps_stdout_a_json_document(project, capsys):
    write(project, "bad.py", NONSCALAR)
    _, out, err = run(capsys, "check", "--fix", "--format", "json", "bad.py")
    assert not [i for i in json.loads(out) if i["code"] == "AG101"]
    assert "fixed AG101" in err


def test_fix_leaves_a_file_that_does_not_compile_alone(project, capsys):
    text = NONSCALAR + "def broken(:\n    pass\n"
    path = write(project, "broken.py", text)
    code, out, err = run(capsys, "check", "--fix", "broken.py")
    assert path.read_text() == text
    assert "broken.py: not fixed: the file does not compile" in err
    assert code == 1 and "AG101" in out and "AG001" in out


def test_fix_places_edits_right_in_a_file_with_form_feeds(project, capsys):
    text = NONSCALAR.replace("import torch\n", "import torch\n# page two\x0c\n")
    text = text.replace("\ny.backward()", "\n\x0cy.backward()")
    path = write(project, "paged.py", text)
    code, out, err = run(capsys, "check", "--fix", "paged.py")
    assert path.read_text() == text.replace("\x0cy.backward()", "\x0cy.mean().backward()")
    assert code == 0 and "fixed AG101" in out


class OneFindingAnalyzer:
    """Stands in for the core: always reports one finding whose fix is given."""

    def __init__(self, fix: Fix):
        self.fix = fix

    def analyze(self, text, settings=None):
        return [Finding("AG101", "nonscalar-backward", "error", "m", 1, 0, 1, 1, (self.fix,))]


def test_a_fix_that_would_break_the_code_is_skipped():
    breaking = Fix("break it", (TextEdit(1, 0, 1, 0, "def ("),))
    result = fix_text("x = 1\n", None, analyzer=OneFindingAnalyzer(breaking))
    assert result.text == "x = 1\n" and not result.applied
    assert "does not compile" in result.problem


def test_unsafe_fixes_are_not_applied():
    unsafe = Fix("rewrite", (TextEdit(1, 0, 1, 5, "x = 2"),), safe=False)
    result = fix_text("x = 1\n", None, analyzer=OneFindingAnalyzer(unsafe))
    assert result.text == "x = 1\n" and not result.applied and result.problem is None


def test_fixing_stops_after_a_few_rounds():
    # A fix that never makes its finding go away must not loop forever.
    grows = Fix("grow", (TextEdit(1, 0, 1, 0, "#"),))
    result = fix_text("x = 1\n", None, analyzer=OneFindingAnalyzer(grows))
    assert 1 < len(result.applied) <= 10


# -- rules and explain -----------------------------------------------------------------------

def test_rules_lists_the_catalogue(project, capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0
    line = next(l for l in out.splitlines() if l.startswith("AG101"))
    assert "nonscalar-backward" in line and "error" in line
    assert rule_by_key("AG101").describe("en")[0] in line
    _, out_zh, _ = run(capsys, "rules", "--locale", "zh")
    assert rule_by_key("AG101").describe("zh")[0] in out_zh


@pytest.mark.parametrize("key", ["AG101", "ag101", "nonscalar-backward"])
def test_explain_shows_the_explanation_and_examples(project, capsys, key):
    rule = rule_by_key("AG101")
    code, out, _ = run(capsys, "explain", key)
    assert code == 0
    assert out.startswith("AG101 nonscalar-backward (error)")
    assert "Bad:" in out and "Good:" in out
    assert rule.bad[0].code.splitlines()[-1] in out
    assert rule.good[0].code.splitlines()[-1] in out
    assert "vector-Jacobian" in out


def test_explain_in_chinese(project, capsys):
    _, out, _ = run(capsys, "explain", "--locale", "zh", "AG101")
    assert "错误示例" in out and "向量" in out


def test_explain_unknown_rule_exits_2(project, capsys):
    code, out, err = run(capsys, "explain", "AG999")
    assert (code, out) == (2, "")
    assert "unknown rule 'AG999'" in err


# -- usage and serve -------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["check", "--format", "xml"],
                                  ["rules", "--locale", "fr"], ["serve", "--tcp", "localhost"]])
def test_usage_errors_exit_2(project, capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and "usage:" in err


def test_serve_without_the_server_module_exits_2(project, capsys, monkeypatch):
    # None in sys.modules makes the import fail as if the module did not exist.
    monkeypatch.setitem(sys.modules, "autograd_lsp.server", None)
    code, _, err = run(capsys, "serve")
    assert code == 2
    assert "language server" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, tcp", [
    (["serve"], None),
    (["serve", "--stdio"], None),
    (["serve", "--tcp", "127.0.0.1:2087"], ("127.0.0.1", 2087)),
    (["serve", "--tcp", "[::1]:9000"], ("::1", 9000)),
])
def test_serve_starts_the_server(project, capsys, monkeypatch, argv, tcp):
    calls = []
    fake = types.ModuleType("autograd_lsp.server")
    fake.run = lambda tcp=None: calls.append(tcp)
    monkeypatch.setitem(sys.modules, "autograd_lsp.server", fake)
    assert run(capsys, *argv)[0] == 0
    assert calls == [tcp]


# -- real processes --------------------------------------------------------------------------

def test_python_dash_m_runs_the_checker(project):
    write(project, "bad.py", NONSCALAR)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", "--format", "json", "bad.py"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert [i["code"] for i in json.loads(done.stdout)].count("AG101") == 1


def test_console_script_is_installed(project):
    # Beside the interpreter that runs the tests (the environment's bin folder), so
    # the test does not depend on that folder being on PATH.
    script = Path(sys.executable).parent / "autograd-lsp"
    assert script.exists(), f"the console script is not installed at {script}"
    write(project, "missing_dir_is_fine.py", CLEAN)
    done = subprocess.run([str(script), "check", "no/such/path"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "no/such/path: error: no such file or folder" in done.stderr
    assert "Traceback" not in done.stderr
