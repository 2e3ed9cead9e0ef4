"""Functions that cannot hold a finding are not run on their own: the findings
must be the same as when every function is run, on every example the project
carries; the skipped ones still answer hovers."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from autograd_lsp.analysis import Analyzer, all_rules
from autograd_lsp.analysis.relevance import Relevance
from autograd_lsp.analysis.engine import ParsedChunk

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def findings(source: str, everything: bool) -> list:
    analyzer = Analyzer()
    analyzer.run_everything = everything
    found = [(f.code, f.line, f.column, f.message) for f in analyzer.analyze(source)]
    assert not analyzer.internal_errors, analyzer.internal_errors[:1]
    return found


def _sources():
    for rule in all_rules():
        for kind, examples in (("bad", rule.bad), ("good", rule.good)):
            for number, example in enumerate(examples):
                yield f"{rule.name}-{kind}-{number}", example.code
    import trainer_file
    import training_file
    yield "benchmark-training-file", training_file.build()
    yield "benchmark-trainer-file", trainer_file.build()
    for path in sorted((ROOT / "examples").rglob("*.py")):
        yield f"examples/{path.name}", path.read_text()


SOURCES = dict(_sources())


@pytest.mark.parametrize("name", SOURCES)
def test_the_shortcut_loses_no_finding(name):
    source = SOURCES[name]
    assert findings(source, everything=False) == findings(source, everything=True)


def relevance_of(source: str) -> tuple[Relevance, dict]:
    tree = ast.parse(source)
    part = ParsedChunk(source, tree, ("test", 0, 0))
    nodes = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes[node.name] = node
    return Relevance([part]), nodes


def test_plain_model_code_does_not_matter():
    relevance, nodes = relevance_of(
        "import torch.nn as nn\n"
        "class Block(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 3)\n"
        "    def forward(self, x):\n"
        "        h = self.fc(x)\n"
        "        h += x\n"
        "        return h.relu()\n")
    assert not relevance.may_matter(nodes["forward"])
    assert not relevance.may_matter(nodes["__init__"])


@pytest.mark.parametrize("body", [
    "    loss.backward()\n",
    "    return x.grad\n",
    "    model.eval()\n",
    "    return x.detach().numpy()\n",
    "    self.w.add_(1)\n",
    "    self.w[0] = 1\n",
    "    w = self.w\n    w += 1\n",
    "    with torch.no_grad:\n        pass\n",
    "    return torch.tensor(x)\n",
    "    return criterion(x, y)[0]\n",
    "    model.training = False\n",
    "    model.train(False)\n",
    "    return torch.optim.SGD([x], lr=0.1)\n",
    "    return Adam(model.parameters())\n",
])
def test_marks(body):
    relevance, nodes = relevance_of("def f(self, x, y, loss, model, criterion):\n" + body)
    assert relevance.may_matter(nodes["f"])


def test_handing_an_optimizer_on_does_not_matter():
    # Passing an optimizer along, or reading its learning rate, does nothing a rule
    # reads; making one, stepping or clearing it does (its own marks).
    relevance, nodes = relevance_of(
        "def log_lr(optimizer, history):\n"
        "    history.append(optimizer.param_groups[0]['lr'])\n"
        "def remember(self, optimizer):\n"
        "    self.optimizer = optimizer\n")
    assert not relevance.may_matter(nodes["log_lr"])
    assert not relevance.may_matter(nodes["remember"])


def test_reading_the_mode_or_naming_params_does_not_matter():
    # A forward that branches on `self.training`, or a helper that counts
    # parameters, holds nothing a rule reads: in model libraries they are most of
    # the functions, and running each on its own was a tenth of the CLI's time.
    relevance, nodes = relevance_of(
        "class Block:\n"
        "    def forward(self, x):\n"
        "        if self.training and self.drop_path > 0:\n"
        "            x = self.drop(x)\n"
        "        return x\n"
        "def count_params(model, params=None):\n"
        "    return sum(p.numel() for p in model.parameters())\n"
        "def split_of(name, train=True):\n"
        "    return 'train' if train else eval(name)\n")
    assert not relevance.may_matter(nodes["forward"])
    assert not relevance.may_matter(nodes["count_params"])
    assert not relevance.may_matter(nodes["split_of"])


def test_a_function_matters_through_the_helpers_it_calls():
    relevance, nodes = relevance_of(
        "def fit(model, loader):\n"
        "    for batch in loader:\n"
        "        step(model, batch)\n"
        "def step(model, batch):\n"
        "    model(batch).sum().backward()\n"
        "def other(x):\n"
        "    return x * 2\n")
    assert relevance.may_matter(nodes["fit"])
    assert not relevance.may_matter(nodes["other"])


def test_a_module_call_reaches_the_forwards_that_matter():
    relevance, nodes = relevance_of(
        "class Odd:\n"
        "    def forward(self, x):\n"
        "        self.scale.mul_(0.9)\n"
        "        return x\n"
        "def run(model, x):\n"
        "    return model(x)\n")
    assert relevance.may_matter(nodes["run"])


def test_module_level_eval_makes_functions_reading_the_model_matter():
    relevance, nodes = relevance_of(
        "model = build()\n"
        "model.eval()\n"
        "def predict(x):\n"
        "    return model(x)\n")
    assert relevance.may_matter(nodes["predict"])


def test_a_skipped_function_still_answers_hovers():
    source = (
        "import torch\n"
        "import torch.nn as nn\n"
        "class Block(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 4)\n"
        "    def forward(self, x):\n"
        "        h = self.fc(torch.randn(2, 3))\n"
        "        return h\n")
    analyzer = Analyzer()
    analyzer.analyze(source)
    name, facts = analyzer.facts_at(9, 15)
    assert name == "h" and facts.shape == (2, 4)
