"""The backward graph drawn without running anything matches the one torch builds."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import Analyzer
from autograd_lsp.analysis.graph import backward_graph

CASES = [
    ("import torch\nx = torch.tensor([1.0], requires_grad=True)\ny = x ** 2 + x * 3\n", "y"),
    ("import torch\nx = torch.tensor(2.0, requires_grad=True)\nw = torch.tensor(3.0, requires_grad=True)\n"
     "z = (x * w).sin().sum()\n", "z"),
    ("import torch\nW = torch.randn(2, 3, requires_grad=True)\nv = torch.ones(3)\nout = (W @ v).exp()\n",
     "out"),
    ("import torch\nx = torch.ones(3, requires_grad=True)\nh = x.double()\nloss = (h - 1).pow(2).mean()\n",
     "loss"),
    ("import torch\nx = torch.ones(4, 2, requires_grad=True)\nfirst = x[0]\nt = torch.tanh(first).sum()\n",
     "t"),
    ("import torch\nimport torch.nn.functional as F\nx = torch.randn(3, requires_grad=True)\n"
     "l = F.mse_loss(torch.sigmoid(x), torch.zeros(3))\n", "l"),
]


def drawn(source: str, name: str) -> list[str]:
    analyzer = Analyzer()
    analyzer.analyze(source)
    line = len(source.splitlines()) + 1
    analyzer.analyze(source + f"{name}\n")
    _, value = analyzer.facts_at(line, 0)
    return backward_graph(value, name)


def torch_graph(source: str, name: str) -> list[str]:
    """The same drawing, walking the graph torch really built."""
    pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    names = {id(v): k for k, v in namespace.items() if hasattr(v, "grad_fn")}
    lines = [f"{name}: {type(namespace[name].grad_fn).__name__}"]

    def walk(fn, prefix):
        nexts = [f for f, _ in fn.next_functions if f is not None]
        for index, child in enumerate(nexts):
            last = index == len(nexts) - 1
            branch, extend = ("└─ ", "   ") if last else ("├─ ", "│  ")
            if type(child).__name__ == "AccumulateGrad":
                lines.append(f"{prefix}{branch}{names[id(child.variable)]} (leaf)")
            else:
                lines.append(f"{prefix}{branch}{type(child).__name__}")
                walk(child, prefix + extend)

    walk(namespace[name].grad_fn, "")
    return lines


@pytest.mark.parametrize("source,name", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_drawn_graph_is_torchs(source, name):
    assert drawn(source, name) == torch_graph(source, name)


def test_unknown_history_is_marked():
    source = "import torch\ndef f(model, x):\n    y = model(x).sum() * 2\n    return y\n"
    analyzer = Analyzer()
    analyzer.analyze(source)
    _, value = analyzer.facts_at(3, 4)
    assert backward_graph(value) == []      # unknown whether it requires grad at all


def test_no_graph_without_grad():
    source = "import torch\nx = torch.ones(3)\ny = x * 2\ny\n"
    analyzer = Analyzer()
    analyzer.analyze(source)
    assert backward_graph(analyzer.facts_at(4, 0)[1]) == []
