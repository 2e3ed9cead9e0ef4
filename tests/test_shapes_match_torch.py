"""Where a shape function of the analysis names a shape, torch gives that shape:
proven with torch, one process for all."""
from __future__ import annotations

import itertools

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.analysis.facts import Sym
from autograd_lsp.analysis.semantics import shapes


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (5, 5), (2, 3, 4), (1, 6)])
def test_diagonal(shape):
    torch = pytest.importorskip("torch")
    t = torch.zeros(shape)
    claimed_any = False
    for offset, dim1, dim2 in itertools.product((0, 1, -1, 2, 7), (0, 1, -1), (0, 1, -1)):
        claimed = shapes.diagonal(shape, offset, dim1, dim2)
        if claimed is None:
            continue
        claimed_any = True
        assert tuple(t.diagonal(offset, dim1, dim2).shape) == claimed, (offset, dim1, dim2)
    assert claimed_any


def test_diagonal_of_a_square_of_one_symbolic_size():
    batch = Sym("B")
    assert shapes.diagonal((batch, batch)) == (batch,)
    assert shapes.diagonal((batch, 8)) == (None,)


def test_backward_of_the_diagonal_of_similarities_is_not_a_scalar():
    source = (
        "import torch\n"
        "z = torch.randn(8, 4, requires_grad=True)\n"
        "logits = z @ z.t()\n"
        "per_anchor = -logits.log_softmax(dim=1).diagonal()\n"
        "per_anchor.backward()\n"
        "w = torch.randn(3, 3, requires_grad=True)\n"
        "torch.diag(w).sum().backward()\n"
    )
    assert [(f.name, f.line) for f in analyze(source)] == [("nonscalar-backward", 5)]


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    """The grids' shape and dtype, as the analysis gives them, are torch's."""
    torch = pytest.importorskip("torch")
    source = ("import torch\n"
              f"a, b = torch.meshgrid(torch.arange(3), torch.arange(5), indexing='{indexing}')\n")
    analyzer = __import__("autograd_lsp.analysis", fromlist=["Analyzer"]).Analyzer()
    analyzer.analyze(source)
    facts = {node.id: value for node, value in analyzer.last.seen.items() if getattr(node, "id", None) in "ab"}
    a, b = torch.meshgrid(torch.arange(3), torch.arange(5), indexing=indexing)
    assert facts["a"].shape == tuple(a.shape) and facts["b"].shape == tuple(b.shape)
    assert (facts["a"].dtype, facts["b"].dtype) == (str(a.dtype)[6:], str(b.dtype)[6:])


# Each name the analysis gives a shape to has that shape when torch runs the code.
SIZED_SOURCES = {
    "normal of numbers": "import torch\nw = torch.normal(0, 0.01, (5, 2))\nv = torch.normal(2.0, 3.0, size=(1, 4))\n",
    "list of a range": "import torch\nidx = torch.tensor(list(range(7)))\n",
    "shuffled, then sliced": ("import random\nimport torch\nindices = list(range(12))\nrandom.shuffle(indices)\n"
                              "indices.reverse()\nbatch = torch.tensor(indices[3:8])\nlast = torch.tensor(indices[10:15])\n"),
    # d2l's data_iter: the first batch has the full size (later ones may not).
    "first item of a generator": (
        "import random\nimport torch\n"
        "def data_iter(batch_size, features):\n"
        "    indices = list(range(len(features)))\n"
        "    random.shuffle(indices)\n"
        "    for i in range(0, len(features), batch_size):\n"
        "        yield features[torch.tensor(indices[i:i + batch_size])]\n"
        "for first in data_iter(4, torch.randn(10, 3)):\n"
        "    break\n"),
}


CLAIMED = {"normal of numbers": {"w", "v"}, "list of a range": {"idx"},
           "shuffled, then sliced": {"batch", "last"}, "first item of a generator": {"first"}}


@pytest.mark.parametrize("name", sorted(SIZED_SOURCES))
def test_sized_lists_and_factories(name):
    torch = pytest.importorskip("torch")
    source = SIZED_SOURCES[name]
    analyzer = __import__("autograd_lsp.analysis", fromlist=["Analyzer"]).Analyzer()
    analyzer.analyze(source)
    claimed = {node.id: value.shape for node, value in analyzer.last.seen.items()
               if isinstance(getattr(node, "id", None), str) and getattr(value, "shape", None) is not None}
    ran: dict = {}
    exec(compile(source, name, "exec"), ran)   # noqa: S102 - the test's own code, run with torch
    shown = {k: v for k, v in claimed.items() if isinstance(ran.get(k), torch.Tensor)}
    assert CLAIMED[name] <= set(shown), claimed
    for key, shape in shown.items():
        assert shape == tuple(ran[key].shape), key
