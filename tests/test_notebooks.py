"""Jupyter notebooks: code cells read as one program, findings placed in their
cells, IPython syntax never mistaken for Python, and `--fix` that changes only
the fixed code of the notebook's JSON."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lsp.analysis import analyze
from tests.test_cli import project, run  # noqa: F401 (a fixture, and the in-process runner)
from autograd_lsp.notebook_files import parse_notebook, with_sources
from autograd_lsp.notebooks import NotebookProgram, analyze_cells, read_cell

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gradients.ipynb"

MAKE_X = "import torch\nx = torch.randn(3, requires_grad=True)\n"


def notebook(*cells, markdown_first=True, **metadata) -> nbformat.NotebookNode:
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                               "display_name": "Python 3"}, **metadata})
    if markdown_first:
        nb.cells.append(new_markdown_cell("Notes, not code."))
    for number, source in enumerate(cells):
        outputs = [new_output("stream", name="stdout", text=f"cell {number}\n")]
        nb.cells.append(new_code_cell(source, execution_count=number + 1, outputs=outputs,
                                      metadata={"tags": [f"t{number}"]}))
    for number, cell in enumerate(nb.cells):
        cell.id = f"id-{number}"
    nbformat.validate(nb)
    return nb


def save(nb, path: Path) -> Path:
    nbformat.write(nb, str(path))
    return path


def codes(placed) -> list[tuple[int, int, str]]:
    return [(p.cell, p.finding.line, p.finding.code) for p in placed]


# -- IPython syntax ---------------------------------------------------------------------------

@pytest.mark.parametrize("source, python", [
    ("%matplotlib inline\nimport torch\n", "pass\nimport torch\n"),
    ("!pip install torch\n!!ls\n", "pass\npass\n"),
    ("files = !ls *.py\nt = %timeit -o f()\n", "files = get_ipython()\nt = get_ipython()\n"),
    ("torch.randn?\n??torch.nn.Linear\nx.backward??\n", "pass\npass\npass\n"),
    ("for i in range(3):\n    %time f(i)\n", "for i in range(3):\n    pass\n"),
    ("%%time\nx = 1\n", "\nx = 1\n"),
    ("\n%%capture out\nx = 1\n", "\n\nx = 1\n"),
    ("%%bash\nfor f in *; do echo $f; done\n", "\n\n"),
    ("%%writefile model.py\nimport torch\n", "\n\n"),
    # A command continued over lines with a backslash.
    ("!pip install \\\n    torch\nx = 1\n", "pass\n\nx = 1\n"),
    # Not commands: inside a string, a bracket or a comment.
    ('s = """\n%not a magic\n!nor this\n"""\n', 's = """\n%not a magic\n!nor this\n"""\n'),
    ("x = (10\n% 3)\n", "x = (10\n% 3)\n"),
    ("# what is this?\nx = 1\n", "# what is this?\nx = 1\n"),
    # Top-level await runs in IPython's loop: the keyword goes, the call stays.
    ("r = await fetch()\n", "r = fetch()\n"),
    ("async with lock:\n    pass\n", "with lock:\n    pass\n"),
    ("async def f():\n    await g()\n", "async def f():\n    await g()\n"),
])
def test_ipython_syntax_becomes_python_line_for_line(source, python):
    cell = read_cell(source)
    assert cell.error is None
    assert cell.python == python
    assert cell.python.count("\n") == cell.line_count


def test_columns_after_a_removed_await_map_back_to_the_users_text():
    cell = read_cell("é = 1; await  g(); await h()\n")
    assert cell.python == "é = 1; g(); h()\n"
    program_h = cell.python.index("h(")
    user_h = "é = 1; await  g(); await h()".index("h(")
    assert cell.user_column(0, program_h) == user_h
    assert cell.program_column(0, user_h) == program_h


def test_no_ipython_syntax_is_ever_a_syntax_error():
    cells = ["%load_ext autoreload\n%autoreload 2\n", "!ls\n", "torch?\n", "%%html\n<b>x</b>\n",
             "await asyncio.sleep(0)\n", "%%timeit -n 3\nsum(range(9))\n"]
    assert [p for p in analyze_cells(cells) if p.finding.code == "AG001"] == []


# -- cells as one program ---------------------------------------------------------------------

def test_nonscalar_backward_two_cells_later_is_reported_in_the_cell_of_the_backward():
    placed = analyze_cells([MAKE_X, "y = x * 2\n", "print(y)\n", "# the gradient\ny.backward()\n"])
    assert codes(placed) == [(4, 2, "AG101")]
    finding = placed[0].finding
    assert (finding.column, finding.end_column) == (0, len("y.backward()"))
    # The fix is placed in the cell too: `y` becomes `y.mean()`.
    edit = finding.fixes[0].edits[0]
    assert (edit.line, edit.column, edit.new_text) == (2, 1, ".mean()")


def test_a_graph_backwarded_twice_across_cells_is_caught():
    cells = [MAKE_X, "loss = (x * 2).sum()\n", "print(loss)\n", "loss.backward()\n",
             "x.grad\n", "loss.backward()\n"]
    assert codes(analyze_cells(cells)) == [(6, 1, "AG102")]


def test_a_cell_that_does_not_parse_is_reported_once_and_the_others_are_analysed():
    cells = [MAKE_X, "y = (x * 2\n\nz = 3\n", "w = x * 3\nw.backward()\n", "def f(:\n"]
    placed = analyze_cells(cells)
    assert codes(placed) == [(2, 1, "AG001"), (3, 2, "AG101"), (4, 1, "AG001")]
    assert placed[0].finding.column == 4   # the unclosed bracket


def test_cell_boundaries_start_new_chunks_even_after_an_unclosed_string():
    cells = [MAKE_X, 's = """never closed\n', "y = x * 2\ny.backward()\n"]
    assert codes(analyze_cells(cells)) == [(2, 1, "AG001"), (3, 2, "AG101")]


def test_a_finding_on_a_replaced_line_is_not_reported_and_magics_keep_lines():
    cells = [MAKE_X, "%time y = x * 2\n", "%%time\nz = x * 2\nz.backward()\n"]
    assert codes(analyze_cells(cells)) == [(3, 3, "AG101")]


def test_top_level_await_is_not_taken_for_a_used_backward_value():
    # `await y.backward()` is odd but not "the value of backward() is used".
    cells = [MAKE_X, "y = (x * 2).sum()\n", "await asyncio.sleep(0)\ny.backward()\n"]
    assert codes(analyze_cells(cells)) == []


def test_findings_match_the_core_on_the_same_program():
    cells = [MAKE_X, "y = x * 2\n", "y.backward()\n"]
    program = NotebookProgram(cells)
    core = analyze(program.text)
    assert [(f.code, f.message) for f in core] == \
        [(p.finding.code, p.finding.message) for p in analyze_cells(cells)]


def test_noqa_in_a_cell_suppresses():
    cells = [MAKE_X, "y = x * 2\n", "y.backward()  # noqa: AG101\n"]
    assert analyze_cells(cells) == []


TRAIN_CELL = ("model = nn.Linear(4, 1)\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "for step in range(10):\n"
              "    optimizer.zero_grad()\n"
              "    loss = model(torch.randn(8, 4)).pow(2).mean()\n"
              "    loss.backward()\n"
              "    optimizer.step()\n")
EVAL_CELL = ("model.eval()\n"
             "for step in range(3):\n"
             "    print(model(torch.randn(8, 4)).mean())\n")
IMPORTS = "import torch\nfrom torch import nn\n"


def test_an_eval_loop_in_its_own_cell_is_judged_on_its_own():
    cells = [IMPORTS, "model = nn.Linear(4, 1)\n", EVAL_CELL]
    assert codes(analyze_cells(cells)) == [(3, 3, "AG303")]
    with_no_grad = EVAL_CELL.replace("for step", "with torch.no_grad():\n  for step").replace("    print", "      print")
    assert codes(analyze_cells([IMPORTS, "model = nn.Linear(4, 1)\n", with_no_grad])) == []


def test_train_and_eval_loops_in_different_cells_are_judged_separately():
    """A training loop in one cell and an evaluation loop without no_grad in the
    next: the evaluation cell is flagged as it would be alone, and the training
    loop (which clears its gradients) is not."""
    cells = [IMPORTS, TRAIN_CELL, EVAL_CELL]
    assert codes(analyze_cells(cells)) == [(3, 3, "AG303")]


# -- the command line ---------------------------------------------------------------------------

def test_check_reads_a_notebook_as_a_notebook(project, capsys):
    path = save(notebook(MAKE_X, "y = x * 2\n", "print(y)\n", "y.backward()\n"), project / "nb.ipynb")
    code, out, err = run(capsys, "check", path.name)
    assert code == 1
    assert out.startswith("nb.ipynb:cell 4:1:1: AG101 [nonscalar-backward] ")
    code, out, _ = run(capsys, "check", "--format", "json", path.name)
    [item] = json.loads(out)
    assert (item["path"], item["cell"], item["line"], item["column"]) == ("nb.ipynb", 4, 1, 1)
    assert item["fixes"][0]["edits"][0] == {"line": 1, "column": 2, "end_line": 1,
                                            "end_column": 2, "new_text": ".mean()"}


def test_a_named_notebook_is_parsed_as_a_notebook_whatever_its_content(project, capsys):
    path = project / "broken.ipynb"
    path.write_text("import torch\n", encoding="utf-8")
    code, out, err = run(capsys, "check", path.name)
    assert code == 2
    assert "broken.ipynb: error: not a notebook: invalid JSON" in err


def test_folder_walks_include_notebooks_but_not_checkpoints(project, capsys):
    save(notebook(MAKE_X, "y = x * 2\ny.backward()\n"), project / "a.ipynb")
    (project / ".ipynb_checkpoints").mkdir()
    save(notebook(MAKE_X, "y = x * 2\ny.backward()\n"), project / ".ipynb_checkpoints" / "a-checkpoint.ipynb")
    code, out, _ = run(capsys, "check", ".")
    assert code == 1
    assert out.splitlines() == [line for line in out.splitlines() if line.startswith("a.ipynb:cell 2:2:1: AG101")]
    assert len(out.splitlines()) == 1


def test_a_notebook_of_another_language_is_skipped(project, capsys):
    nb = notebook("x <- c(1, 2)\n")
    nb.metadata = {"kernelspec": {"name": "ir", "language": "R", "display_name": "R"}}
    save(nb, project / "r.ipynb")
    code, out, err = run(capsys, "check", "r.ipynb")
    assert (code, out) == (0, "")
    assert "skipped: a r notebook, not Python" in err


def test_fix_changes_only_the_fixed_code_and_the_notebook_stays_valid(project, capsys):
    nb = notebook(MAKE_X, "y = x * 2\n", "print(y)\n", "y.backward()\nx.grad\n")
    path = save(nb, project / "nb.ipynb")
    before = path.read_text(encoding="utf-8")
    code, out, err = run(capsys, "check", "--fix", path.name)
    assert code == 0, (out, err)
    assert "nb.ipynb:cell 4:1:1: fixed AG101 [nonscalar-backward]" in out
    after = path.read_text(encoding="utf-8")
    assert after == before.replace('"y.backward()\\n"', '"y.mean().backward()\\n"')
    fixed = nbformat.read(str(path), as_version=4)
    nbformat.validate(fixed)
    assert [c.id for c in fixed.cells] == [c.id for c in nb.cells]
    assert [c.get("outputs") for c in fixed.cells] == [c.get("outputs") for c in nb.cells]


def test_fix_keeps_a_hand_formatted_notebook_byte_for_byte_elsewhere(project, capsys):
    # Two-space indent, unsorted keys, escaped non-ASCII, string sources, no final newline.
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"note": "é"},
                "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": MAKE_X + "y = x * 2  # é\n"},
                          {"cell_type": "code", "id": "b", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": "y.backward()"}]}
    raw = json.dumps(document, indent=2, ensure_ascii=True)
    path = project / "hand.ipynb"
    path.write_text(raw, encoding="utf-8")
    assert run(capsys, "check", "--fix", path.name)[0] == 0
    assert path.read_text(encoding="utf-8") == raw.replace('"y.backward()"', '"y.mean().backward()"')


def test_with_sources_formats_a_list_source_as_nbformat_does():
    nb = notebook("a = 1\nb = 2\n")
    raw = nbformat.writes(nb) + "\n"
    parsed = parse_notebook(raw)
    new = with_sources(parsed, {0: "a = 1\nc = 3\nb = 2\n"})
    changed = nbformat.reads(new, as_version=4)
    changed.cells[1].source = "a = 1\nc = 3\nb = 2\n"
    nb.cells[1].source = "a = 1\nc = 3\nb = 2\n"
    assert new == nbformat.writes(nb) + "\n"


def test_the_bundled_example_notebook(capsys):
    nbformat.validate(nbformat.read(str(EXAMPLE), as_version=4))
    code, out, _ = run(capsys, "check", "--no-cache", str(EXAMPLE))
    assert code == 1
    assert [line.split(" [")[0] for line in out.splitlines()] == [f"{EXAMPLE}:cell 4:1:1: AG101"]


def test_a_notebook_follows_the_projects_own_modules(project, capsys):
    (project / "data.py").write_text("import torch\n\ndef batch():\n    return torch.randn(4, 3, requires_grad=True)\n")
    save(notebook("from data import batch\n", "x = batch()\nloss = x * 2\n", "loss.backward()\n"),
         project / "nb.ipynb")
    code, out, _ = run(capsys, "check", "--no-cache", "nb.ipynb")
    assert (code, out.split(" [")[0]) == (1, "nb.ipynb:cell 3:1:1: AG101")
