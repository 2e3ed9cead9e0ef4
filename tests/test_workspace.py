"""Imports of the project's own modules: read from their text (never run), cached
by content, forgotten when they change. The files live in a dict: the core does
no I/O of its own."""
from __future__ import annotations

import os

import pytest

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


def test_a_module_imported_then_checked_is_parsed_once(monkeypatch):
    import ast
    files = Files({"models.py": MODEL, "helpers.py": MODEL})
    workspace = Workspace(ROOT, files.read)
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    check(files, "train.py", text, workspace)
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: parsed.append(source) or real_parse(source, *a, **k))
    # models.py ran as train.py's import: checking it now reads its chunks again.
    assert check(files, "models.py", MODEL, workspace)[0] == []
    assert parsed == []
    # helpers.py has the same text but was never imported: its own parse, so that a
    # copied helper never shares its nodes with another file's.
    check(files, "helpers.py", MODEL, workspace)
    assert parsed


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


# A package whose `__init__` re-exports from submodules, one of them costly and
# unrelated: `from pkg import Net` needs only the submodule that defines Net.
HEAVY = "import torch\n" + "".join(f"w{i} = torch.randn(3, requires_grad=True) * {i}\n" for i in range(40))
PACKAGES = {
    "explicit": {"pkg/__init__.py": "from .heavy import *\nfrom .models import Net\n__all__ = ['Net']\n",
                 "pkg/models.py": MODEL, "pkg/heavy.py": HEAVY},
    "renamed": {"pkg/__init__.py": "from .heavy import w1\nfrom .models import Net as Model\n"
                                   "from .models import Net\n",
                "pkg/models.py": MODEL.replace("class Net", "class Net0") + "Net = Net0\n",
                "pkg/heavy.py": HEAVY},
    "star": {"pkg/__init__.py": "from .heavy import w0\nfrom .models import *\n",
             "pkg/models.py": MODEL, "pkg/heavy.py": HEAVY},
    "nested": {"pkg/__init__.py": "from .heavy import *\nfrom .sub import Net\n",
               "pkg/sub/__init__.py": "from .models import *\n", "pkg/sub/models.py": MODEL,
               "pkg/heavy.py": HEAVY},
    # Bound by code of the `__init__` itself: it runs, as before.
    "assigned": {"pkg/__init__.py": "from .heavy import *\nfrom .models import Net as _Net\nNet = _Net\n",
                 "pkg/models.py": MODEL, "pkg/heavy.py": HEAVY},
    "guarded": {"pkg/__init__.py": "from .heavy import *\ntry:\n    from .models import Net\n"
                                   "except ImportError:\n    Net = None\n",
                "pkg/models.py": MODEL, "pkg/heavy.py": HEAVY},
    # A later star import rebinds the name: the last binding wins.
    "rebound": {"pkg/__init__.py": "from .models import Net\nfrom .other import *\n",
                "pkg/models.py": MODEL,
                "pkg/other.py": MODEL.replace("self.fc(x)", "self.fc(x).sum()")},
    # A star import under `try`: its names are known only by running the `__init__`.
    "guarded star": {"pkg/__init__.py": "try:\n    from .models import *\nexcept ImportError:\n    pass\n",
                     "pkg/models.py": MODEL},
    # `from pkg import models`: the submodule itself.
    "submodule": {"pkg/__init__.py": "from .heavy import *\n", "pkg/models.py": MODEL,
                  "pkg/heavy.py": HEAVY},
}
# The walker joins a `try`'s paths: a name bound to None where the import failed is
# unknown. (A name the failed path leaves unbound keeps the imported class: there,
# `from pkg import Net` would raise.)
EXPECTED = {"rebound": [], "guarded": []}


@pytest.mark.parametrize("layout", sorted(PACKAGES))
def test_a_name_re_exported_by_a_package(layout, monkeypatch):
    if layout == "submodule":
        text = TRAIN.format(import_line="from pkg import models", model="models.Net()")
    else:
        text = TRAIN.format(import_line="from pkg import Net", model="Net()")
    files = Files(PACKAGES[layout])
    codes, analyzer = check(files, "train.py", text)
    assert codes == EXPECTED.get(layout, [("AG101", 5)])
    # Every file whose text can change the finding is a dependency.
    assert os.path.join(ROOT, "pkg/__init__.py") in analyzer.dependencies
    if layout not in ("assigned", "guarded"):
        # The unrelated submodule was at most read for its names, never run.
        assert "pkg/heavy.py" not in _modules_run(analyzer)
    else:
        assert "pkg/heavy.py" in _modules_run(analyzer)
    # The same findings as running every `__init__` whole.
    monkeypatch.setattr(Workspace, "reexported", lambda *args: None)
    assert check(Files(PACKAGES[layout]), "train.py", text)[0] == codes


def _modules_run(analyzer) -> set:
    return {os.path.relpath(path, ROOT) for path in analyzer.workspace.modules_run()}


def test_a_changed_package_init_is_read_again():
    files = Files(PACKAGES["explicit"])
    workspace = Workspace(ROOT, files.read)
    text = TRAIN.format(import_line="from pkg import Net", model="Net()")
    codes, analyzer = check(files, "train.py", text, workspace)
    assert codes == [("AG101", 5)]
    # The package now re-exports a model that reduces its output.
    init = os.path.join(ROOT, "pkg/__init__.py")
    files[os.path.join(ROOT, "pkg/reduced.py")] = MODEL.replace("self.fc(x)", "self.fc(x).mean()")
    files[init] = "from .heavy import *\nfrom .reduced import Net\n"
    assert analyzer.forget_modules(workspace.forget(init)) is True
    assert analyzer.analyze(text, path=os.path.join(ROOT, "train.py")) == []


def test_a_module_created_later_is_found_once_announced():
    files = Files({})
    workspace = Workspace(ROOT, files.read)
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    codes, analyzer = check(files, "train.py", text, workspace)
    assert codes == []
    files[os.path.join(ROOT, "models.py")] = MODEL
    # Module lookups are remembered until the editor or the file system says a
    # file changed or appeared.
    workspace.forget(os.path.join(ROOT, "models.py"))
    assert check(files, "train.py", text, workspace)[0] == [("AG101", 5)]


def test_calls_into_other_modules_share_a_budget(monkeypatch):
    from autograd_lsp.analysis import walker
    files = Files({"lib.py": "def spend(x):\n" + "    x = x + 1\n" * 100 + "    return x\n"
                             "def scaled(w):\n    return w * 2\n"})
    text = ("import torch\nfrom lib import spend, scaled\nspend(0)\n"
            "w = torch.ones(3, requires_grad=True)\nscaled(w).backward()\n"
            "def local(v):\n    return v * 3\nlocal(w).backward()\n")
    assert check(files, "train.py", text)[0] == [("AG101", 5), ("AG101", 8)]
    # Once the project's other modules have taken their share, calls into them act
    # as unknown code; the file's own functions are still followed.
    monkeypatch.setattr(walker, "PROJECT_CALLS_BUDGET", 50)
    assert check(Files(dict(files)), "train.py", text)[0] == [("AG101", 8)]


def test_a_module_whose_run_fails_acts_as_unknown_code_once(monkeypatch):
    files = Files({"models.py": MODEL})
    workspace = Workspace(ROOT, files.read)
    runs = []

    def failing_run(self, path, text, name):
        runs.append(path)
        raise AttributeError("a bug of ours")

    monkeypatch.setattr(Workspace, "_run", failing_run)
    text = TRAIN.format(import_line="from models import Net", model="Net()")
    for _ in range(3):
        # The importer's own analysis goes on (no internal error of its own)...
        assert check(files, "train.py", text, workspace)[0] == []
    # ...and the module is not run again for every importer.
    assert runs == [os.path.join(ROOT, "models.py")]
    assert workspace.internal_errors == [f"{os.path.join(ROOT, 'models.py')}: AttributeError: a bug of ours"]


def test_a_run_on_its_own_spends_a_share_of_its_budget_in_other_modules(monkeypatch):
    from autograd_lsp.analysis import walker
    # `spend` walks about 2,400 steps: more than a quarter of a run on its own's
    # 8,000, less than the module's own run may spend in other modules.
    files = Files({"lib.py": "def spend(x):\n" + "    x = x + 1\n" * 600 + "    return x\n"
                             "def scaled(w):\n    return w * 2\n"})
    body = "spend(0)\nw = torch.ones(3, requires_grad=True)\nscaled(w).backward()\n"
    module_level = "import torch\nfrom lib import spend, scaled\n" + body
    assert check(files, "train.py", module_level)[0] == [("AG101", 5)]
    alone = "import torch\nfrom lib import spend, scaled\ndef run():\n" + \
        "".join("    " + line + "\n" for line in body.splitlines())
    assert check(Files(dict(files)), "train.py", alone)[0] == []
    monkeypatch.setattr(walker, "PROJECT_SHARE", 1)
    assert check(Files(dict(files)), "train.py", alone)[0] == [("AG101", 6)]


def test_a_call_into_the_project_matters_only_when_the_code_called_may():
    """A function that calls a project helper runs on its own only when that
    helper (followed through its own module's calls and imports) may hold a
    finding: a metric does not, a training step does."""
    files = Files({
        "metrics.py": "def accuracy(out, y):\n    return (out.argmax(1) == y).float().mean()\n",
        "steps.py": ("from metrics import accuracy\n"
                     "def train_step(model, opt, x, y):\n"
                     "    loss = model(x).sum()\n"
                     "    loss.backward()\n"
                     "    opt.step()\n"
                     "    return accuracy(model(x), y)\n"),
        "report.py": "from steps import train_step\ndef run(*args):\n    return train_step(*args)\n",
    })
    text = ("import torch\nfrom metrics import accuracy\n"
            "import report\n"
            "def score(out, y):\n"
            "    return accuracy(out, y)\n"
            "def fit(*args):\n"
            "    return report.run(*args)\n")
    ran = []
    analyzer2 = Analyzer(workspace=Workspace(ROOT, files.read))
    original = analyzer2._run_alone

    def recording(function, *args, **kwargs):
        ran.append(function.node.name)
        return original(function, *args, **kwargs)

    analyzer2._run_alone = recording
    analyzer2.analyze(text, path=os.path.join(ROOT, "train.py"))
    assert ran == ["fit"]
    analyzer2.run_everything = True
    ran.clear()
    analyzer2.analyze(text + "\n", path=os.path.join(ROOT, "train.py"))
    assert sorted(ran) == ["fit", "score"]
