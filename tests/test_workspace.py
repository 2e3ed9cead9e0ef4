"""Imports of the project's own modules: read from their text (never run), cached
by content, forgotten when they change. The files live in a dict: the core does
no I/O of its own."""
from __future__ import annotations

import os

from autograd_lsp.analysis import Analyzer
from autograd_lsp.analysis.workspace import Workspace

ROOT = os.path.abspath("/project")

MODEL = (
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(4, 1)\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n"
)
TRAIN = (
    "import torch\n"
    "{import_line}\n"
    "model = {model}\n"
    "out = model(torch.randn(8, 4))\n"
    "out.backward()\n"
)


class Files(dict):
    """path -> text, counting reads."""

    def __init__(self, files):
        super().__init__({os.path.join(ROOT, k): v for k, v in files.items()})
        self.reads = 0

    def read(self, path):
        self.reads += 1
        return self.get(os.path.normpath(path))


def check(files: Files, main: str, text: str, workspace: Workspace | None = None):
    workspace = workspace or Workspace(ROOT, files.read)
    analyzer = Analyzer(workspace=workspace)
    findings = analyzer.analyze(text, path=os.path.join(ROOT, main))
    assert not analyzer.internal_errors, analyzer.internal_errors
    return [(f.code, f.line) for f in findings], analyzer


def test_from_import_of_a_sibling_module():
    files = Files({"models.py": MODEL})
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    assert check(files, "train.py", text)[0] == [("AG101", 5)]


def test_relative_import_in_a_package():
    files = Files({"pkg/__init__.py": "", "pkg/models.py": MODEL})
    text = TRAIN.format(import_line="from .models import Net", model="Net()")
    assert check(files, "pkg/train.py", text)[0] == [("AG101", 5)]


def test_dotted_import_with_an_alias():
    files = Files({"pkg/__init__.py": "", "pkg/models.py": MODEL})
    text = TRAIN.format(import_line="import pkg.models as models", model="models.Net()")
    assert check(files, "train.py", text)[0] == [("AG101", 5)]


def test_a_module_under_src():
    files = Files({"src/lib/__init__.py": "", "src/lib/models.py": MODEL})
    text = TRAIN.format(import_line="from lib.models import Net", model="Net()")
    assert check(files, "scripts/train.py", text)[0] == [("AG101", 5)]


def test_a_name_re_exported_by_another_module():
    files = Files({"models.py": MODEL, "helpers.py": "from models import Net\n"})
    text = TRAIN.format(import_line="from helpers import Net", model="Net()")
    assert check(files, "train.py", text)[0] == [("AG101", 5)]


def test_an_unknown_module_stays_unknown():
    files = Files({})
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    assert check(files, "train.py", text)[0] == []


def test_import_cycles_end():
    files = Files({"a.py": "from b import g\ndef f(x):\n    return g(x)\n",
                   "b.py": "from a import f\ndef g(x):\n    return x * 2\n"})
    text = "import torch\nfrom a import f\nw = torch.ones(3, requires_grad=True)\nf(w).backward()\n"
    codes, _ = check(files, "main.py", text)
    assert codes in ([("AG101", 4)], [])


def test_a_changed_module_is_read_again():
    files = Files({"models.py": MODEL})
    workspace = Workspace(ROOT, files.read)
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    codes, analyzer = check(files, "train.py", text, workspace)
    assert codes == [("AG101", 5)]
    assert analyzer.dependencies == {os.path.join(ROOT, "models.py")}
    # The model now reduces its output: the same training text is clean.
    files[os.path.join(ROOT, "models.py")] = MODEL.replace("self.fc(x)", "self.fc(x).mean()")
    stale = workspace.forget(os.path.join(ROOT, "models.py"))
    assert os.path.join(ROOT, "models.py") in stale
    assert analyzer.forget_modules(stale) is True
    assert analyzer.analyze(text, path=os.path.join(ROOT, "train.py")) == []


def test_a_project_module_rewritten_on_disk_is_read_again(tmp_path):
    # read_file keeps texts while a file's stat is unchanged: a rewrite must show.
    from autograd_lsp.project import read_file
    module = tmp_path / "models.py"
    module.write_text("A = 1\n")
    assert read_file(str(module)) == "A = 1\n"
    module.write_text("A = 22\n")
    assert read_file(str(module)) == "A = 22\n"
    module.unlink()
    assert read_file(str(module)) is None
