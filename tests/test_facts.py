"""What the interpreter knows about tensors, checked on small programs.

Each case states facts a reader can verify with torch; `test_facts_match_torch`
runs the same programs with torch and compares.
"""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import Analyzer
from autograd_lsp.analysis.facts import TensorFacts


def facts(source: str, name: str, line: int | None = None):
    """Facts of `name` at its last mention (or on `line`)."""
    analyzer = Analyzer()
    analyzer.analyze(source)
    assert not analyzer.internal_errors
    lines = source.splitlines()
    candidates = [i for i, text in enumerate(lines, 1) if name in text and (line is None or i == line)]
    row = candidates[-1]
    col = lines[row - 1].rindex(name)
    found = analyzer.facts_at(row, col)
    assert found is not None, f"no facts for {name} on line {row}"
    return found[1]


_CUSTOM_FUNCTION = (
    "import torch\n"
    "class Square(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n"
    "        return x * x\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        x, = ctx.saved_tensors\n"
    "        return 2 * x * grad\n")

CASES = [
    # (source, name, expected facts)
    ("import torch\nx = torch.randn(3, 4, requires_grad=True)\nx\n", "x",
     dict(requires_grad=True, is_leaf=True, dtype="float32", shape=(3, 4), grad="none")),
    ("import torch as T\nx = T.ones(2)\ny = x * 3\ny\n", "y",
     dict(requires_grad=False, is_leaf=True, shape=(2,))),
    ("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\ny\n", "y",
     dict(requires_grad=True, is_leaf=False, shape=(), grad_fn="SumBackward0")),
    ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x ** 2\ny\n", "y",
     dict(requires_grad=True, is_leaf=False, grad_fn="PowBackward0")),
    ("from torch import tensor\nt = tensor([1, 2])\nt\n", "t",
     dict(dtype="int64", shape=(2,), requires_grad=False)),
    ("import torch\nt = torch.arange(0.0, 1.0, 0.25)\nt\n", "t", dict(dtype="float32", shape=(4,))),
    ("import torch\nx = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    y = x * 2\ny\n", "y",
     dict(requires_grad=False, is_leaf=True)),
    ("import torch\nx = torch.ones(2, requires_grad=True)\nwith torch.inference_mode():\n    y = x * 2\ny\n",
     "y", dict(requires_grad=False)),
    ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.detach()\ny\n", "y",
     dict(requires_grad=False, is_leaf=True, shape=(2,))),
    ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.double()\ny\n", "y",
     dict(requires_grad=True, is_leaf=False, dtype="float64")),
    ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.float()\ny\n", "y",
     dict(requires_grad=True, is_leaf=True, dtype="float32")),
    ("import torch\nW = torch.randn(2, 3, requires_grad=True)\nv = torch.ones(3)\nout = W @ v\nout\n",
     "out", dict(shape=(2,), requires_grad=True, grad_fn="MvBackward0")),
    # functional_call runs the forward with the given tensors: a graph back to them.
    ("import torch\nfrom torch.func import functional_call\nm = torch.nn.Linear(3, 1)\n"
     "out = functional_call(m, dict(m.named_parameters()), (torch.randn(4, 3),))\nout\n", "out",
     dict(requires_grad=True, is_leaf=False, shape=(4, 1))),
    ("import torch\nfrom torch.func import functional_call\nm = torch.nn.Linear(3, 1)\n"
     "frozen = {k: v.detach() for k, v in m.named_parameters()}\n"
     "out = functional_call(m, frozen, (torch.randn(4, 3),))\nout\n", "out",
     dict(requires_grad=False, shape=(4, 1))),
    # Indices and counts are integer tensors.
    ("import torch\ncounts = torch.bincount(torch.tensor([0, 2, 2]))\ncounts\n", "counts",
     dict(requires_grad=False, dtype="int64")),
    ("import torch\norder = torch.randn(4, requires_grad=True).argsort()\norder\n", "order",
     dict(requires_grad=False, dtype="int64")),
    # logsumexp needs a dim and drops it.
    ("import torch\nx = torch.randn(16, 3, requires_grad=True)\ne = torch.logsumexp(x, dim=1)\ne\n", "e",
     dict(requires_grad=True, shape=(16,), grad_fn="LogsumexpBackward0")),
    ("import torch\nx = torch.randn(4, 3)\ne = x.logsumexp(1, keepdim=True)\ne\n", "e",
     dict(requires_grad=False, shape=(4, 1))),
    # from_pretrained freezes its weight unless told not to.
    ("import torch\nimport torch.nn as nn\ne = nn.Embedding.from_pretrained(torch.randn(5, 3))\n"
     "w = e.weight\nw\n", "w", dict(requires_grad=False, is_leaf=True, shape=(5, 3))),
    ("import torch\nimport torch.nn as nn\ne = nn.Embedding.from_pretrained(torch.randn(5, 3), freeze=False)\n"
     "out = e(torch.tensor([[0, 4]]))\nout\n", "out", dict(requires_grad=True, is_leaf=False, shape=(1, 2, 3))),
    ("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nout = m(torch.randn(4, 3))\nout\n",
     "out", dict(requires_grad=True, is_leaf=False)),
    ("import torch\nimport torch.nn.functional as F\nx = torch.ones(3, requires_grad=True)\n"
     "l = F.mse_loss(x, torch.zeros(3))\nl\n", "l", dict(shape=(), requires_grad=True)),
    ("import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).sum().backward()\nx\n", "x",
     dict(grad="set")),
    ("import torch\nfrom torch.autograd import grad\nx = torch.tensor(2.0, requires_grad=True)\n"
     "g = grad(x ** 2, x)[0]\ng\n", "g", dict(requires_grad=False)),
    ("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
     "g = torch.autograd.grad(x ** 2, x, create_graph=True)[0]\ng\n", "g", dict(requires_grad=None)),
    # Convolution output sizes follow kernel, stride, padding and dilation.
    ("import torch\nimport torch.nn as nn\nc = nn.Conv2d(1, 4, 3, stride=2, padding=1)\n"
     "y = c(torch.randn(2, 1, 9, 8))\ny\n", "y", dict(shape=(2, 4, 5, 4), requires_grad=True)),
    ("import torch\nimport torch.nn as nn\nc = nn.Conv1d(2, 3, kernel_size=5, dilation=2)\n"
     "y = c(torch.randn(1, 2, 20))\ny\n", "y", dict(shape=(1, 3, 12))),
    ("import torch\nimport torch.nn as nn\nc = nn.Conv2d(1, 2, (3, 5), padding='same')\n"
     "y = c(torch.randn(1, 1, 7, 7))\ny\n", "y", dict(shape=(1, 2, 7, 7))),
    # A subclass of a layer has the layer's parameters.
    ("import torch\nimport torch.nn as nn\nclass L(nn.Linear):\n    pass\n"
     "y = L(3, 2)(torch.randn(4, 3))\ny\n", "y", dict(shape=(4, 2), requires_grad=True)),
    ("import torch\nimport torch.nn as nn\nclass L(nn.Linear):\n"
     "    def forward(self, x):\n        return super().forward(x) * 2\n"
     "y = L(3, 2)(torch.randn(4, 3))\ny\n", "y", dict(shape=(4, 2), requires_grad=True)),
    # `torch.min(a, b)` of two tensors is their elementwise minimum (PPO's clipped
    # surrogate), not a reduction giving (values, indices).
    ("import torch\nw = torch.randn(3, requires_grad=True)\n"
     "m = torch.min(w * 2, torch.clamp(w, 0.8, 1.2) * 3)\nm\n", "m",
     dict(shape=(3,), requires_grad=True, grad_fn="MinimumBackward0")),
    ("import torch\nw = torch.randn(2, 3, requires_grad=True)\nm = w.max(torch.zeros(3))\nm\n", "m",
     dict(shape=(2, 3), requires_grad=True, grad_fn="MaximumBackward0")),
    # A loop over a whole slice of a list that is not empty runs at least once (REINFORCE
    # walks its episode backwards), so the sum it builds is a tensor, never the 0 it began at.
    ("import torch\nw = torch.ones(2, requires_grad=True)\nsteps = []\ndone = False\n"
     "while not done:\n    steps.append((w * 2).sum())\n    done = torch.rand(1).item() < 2\n"
     "total = 0\nfor s in steps[::-1]:\n    total = total + s\ntotal\n", "total",
     dict(requires_grad=True, is_leaf=False, shape=())),
    # Pooling, adaptive pooling and transposed convolutions follow torch's formulas;
    # split and chunk give one piece per slice.
    ("import torch\nimport torch.nn as nn\nx = torch.randn(4, 8, 16, 16)\n"
     "y = nn.MaxPool2d(3, stride=2, padding=1)(x)\ny\n", "y", dict(shape=(4, 8, 8, 8))),
    ("import torch\nimport torch.nn as nn\nx = torch.randn(4, 8, 16, 16)\n"
     "y = nn.AdaptiveAvgPool2d((None, 4))(nn.AvgPool2d(2)(x))\ny\n", "y", dict(shape=(4, 8, 8, 4))),
    ("import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 3, 9, 9)\n"
     "y = -F.max_pool2d(-x, 3, stride=1, padding=1)\ny\n", "y", dict(shape=(2, 3, 9, 9))),
    ("import torch\nimport torch.nn as nn\nx = torch.randn(2, 8, 5, 7)\n"
     "y = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)(x)\ny\n", "y",
     dict(shape=(2, 4, 10, 14), requires_grad=True)),
    ("import torch\nx = torch.randn(10, 3)\na, b, c = x.split(4)\nc\n", "c", dict(shape=(2, 3))),
    ("import torch\nx = torch.randn(3, 10)\nparts = torch.chunk(x, 3, dim=1)\nlast = parts[-1]\nlast\n",
     "last", dict(shape=(3, 2))),
    # A rollout: the list starts with a state that does not require grad, then holds the
    # cell's outputs; its stack requires grad.
    ("import torch\nimport torch.nn as nn\ncell = nn.Linear(3, 3)\nstates = [torch.randn(4, 3)]\n"
     "for _ in range(5):\n    states.append(cell(states[-1]))\npred = torch.stack(states, 1)\npred\n", "pred",
     dict(requires_grad=True, is_leaf=False, grad_fn="StackBackward0")),
    # NumPy dtypes reach the tensors made from the arrays.
    ("import numpy as np\nimport torch\nidx = torch.from_numpy(np.zeros(10).astype(np.int64))\nidx\n", "idx",
     dict(dtype="int64", requires_grad=False)),
    ("import numpy as np\nimport torch\nz = torch.from_numpy(np.zeros((2, 3), dtype=np.float32))\nz\n", "z",
     dict(dtype="float32")),
    ("import numpy as np\nimport torch\nz = torch.from_numpy(np.zeros(3).astype('float16'))\nz\n", "z",
     dict(dtype="float16")),
    # `key in a_dict` with known keys decides the branch (a store of named parameters).
    ("import torch\nstore = {}\ndef param(name, init=None):\n    if name not in store:\n"
     "        store[name] = init.clone().requires_grad_(True)\n    return store[name]\n"
     "p = param('w', torch.zeros(3))\nq = param('w').exp()\nq\n", "q",
     dict(requires_grad=True, is_leaf=False, shape=(3,))),
    # `heads or {...}` is the dict when `heads` is None, and an nn.ModuleDict's items
    # are its layers.
    ("import torch\nimport torch.nn as nn\nheads = None\nheads = heads or {'hm': 3, 'wh': 2}\n"
     "md = nn.ModuleDict({n: nn.Linear(4, d) for n, d in heads.items()})\n"
     "out = {n: head(torch.randn(5, 4)) for n, head in md.items()}\nwh = out['wh']\nwh\n", "wh",
     dict(shape=(5, 2), requires_grad=True, is_leaf=False)),
    # `del saved[:]` empties the list: what the next episode appends is all it holds.
    ("import torch\nw = torch.ones(2, requires_grad=True)\nsaved = [torch.zeros(())]\n"
     "for ep in range(3):\n    del saved[:]\n    saved.append((w * 2).sum())\n    total = 0\n"
     "    for s in saved:\n        total = total + s\ntotal\n", "total",
     dict(requires_grad=True, is_leaf=False, shape=())),
    # An LSTMCell step gives the next (h, c); a GRUCell the next h.
    ("import torch\nimport torch.nn as nn\ncell = nn.LSTMCell(5, 16)\nh, c = torch.zeros(8, 16), torch.zeros(8, 16)\n"
     "h, c = cell(torch.randn(8, 5), (h, c))\nc\n", "c", dict(shape=(8, 16), requires_grad=True, is_leaf=False)),
    ("import torch\nimport torch.nn as nn\ng = nn.GRUCell(5, 7)(torch.randn(3, 5))\ng\n", "g",
     dict(shape=(3, 7), requires_grad=True)),
    # torch.distributions: a draw never requires grad; log_prob, rsample and entropy
    # are computed from the parameters.
    ("import torch\nfrom torch.distributions import Categorical\nlogits = torch.randn(5, 3, requires_grad=True)\n"
     "a = Categorical(logits=logits).sample()\na\n", "a",
     dict(requires_grad=False, is_leaf=True, dtype="int64", shape=(5,))),
    ("import torch\nfrom torch.distributions import Categorical\nlogits = torch.randn(5, 3, requires_grad=True)\n"
     "dist = Categorical(torch.softmax(logits, -1))\nlp = dist.log_prob(dist.sample())\nlp\n", "lp",
     dict(requires_grad=True, is_leaf=False, shape=(5,))),
    ("import torch\nimport torch.distributions as D\nmu = torch.randn(4, 2, requires_grad=True)\n"
     "n = D.Normal(mu, torch.ones(2))\nx = n.sample((3,))\nx\n", "x",
     dict(requires_grad=False, dtype="float32", shape=(3, 4, 2))),
    ("import torch\nimport torch.distributions as D\nmu = torch.randn(4, 2, requires_grad=True)\n"
     "r = D.normal.Normal(mu, 0.5).rsample()\nr\n", "r",
     dict(requires_grad=True, is_leaf=False, shape=(4, 2))),
    ("import torch\nimport torch.distributions as D\nmu = torch.randn(4, 2, requires_grad=True)\n"
     "h = D.Categorical(logits=mu).entropy()\nh\n", "h",
     dict(requires_grad=True, is_leaf=False, shape=(4,), grad_fn="NegBackward0")),
    ("import torch\nimport torch.nn.functional as F\na = torch.randn(8, 5, requires_grad=True)\n"
     "s = -F.cosine_similarity(a, torch.randn(1, 5), dim=-1)\ns\n", "s",
     dict(requires_grad=True, is_leaf=False, shape=(8,))),
    ("import torch\nimport torch.nn.functional as F\na = torch.randn(8, 5, requires_grad=True)\n"
     "d = F.pairwise_distance(a, a * 2, keepdim=True)\nd\n", "d", dict(requires_grad=True, shape=(8, 1))),
    ("import torch\ndata = torch.randn(32, 12)\nstart = 24\nb = data[start:start + 16]\nb\n", "b",
     dict(shape=(8, 12))),
    ("import torch\nreturns = []\nfor r in (1.0, 0.0, 2.0):\n    returns.insert(0, r)\n"
     "w = torch.ones(1, requires_grad=True)\nt = torch.stack([w[0] * g for g in returns])\nt\n", "t",
     dict(requires_grad=True, shape=(3,))),
    # A custom autograd Function: its forward runs without grad, its output is wrapped.
    (_CUSTOM_FUNCTION + "w = torch.randn(3, 2, requires_grad=True)\ny = Square.apply(w * 1.0)\ny\n", "y",
     dict(requires_grad=True, is_leaf=False, shape=(3, 2), dtype="float32", grad_fn="SquareBackward")),
    (_CUSTOM_FUNCTION + "square = Square.apply\ny = square(torch.ones(4))\ny\n", "y",
     dict(requires_grad=False, is_leaf=True, shape=(4,))),
    # Ops that move or overwrite elements keep the receiver's shape.
    ("import torch\nw = torch.randn(6, 2, requires_grad=True)\nf = w.flip(0).roll(1, 0).tril()\nf\n", "f",
     dict(requires_grad=True, is_leaf=False, shape=(6, 2))),
    ("import torch\nw = torch.randn(4, 3, requires_grad=True)\ns = w.scatter(1, torch.zeros(4, 1, dtype=torch.long), 0.0)\n"
     "v, i = s.sort(1)\nv\n", "v", dict(requires_grad=True, shape=(4, 3))),
    ("import torch\np = torch.softmax(torch.randn(2, 5, requires_grad=True), -1)\na = p.multinomial(3)\na\n", "a",
     dict(requires_grad=False, is_leaf=True, dtype="int64", shape=(2, 3))),
    ("import torch\np = torch.softmax(torch.randn(5, requires_grad=True), 0)\n"
     "a = torch.multinomial(p, 1).item()\nlp = torch.log(p[a])\nlp\n", "lp",
     dict(requires_grad=True, is_leaf=False, shape=())),
    # An in-place write takes what it writes from its values argument, after the
    # dim, index or mask (a graph layer summing messages with index_add_), or from
    # every tensor it is given.
    ("import torch\nh = torch.randn(4, 2, requires_grad=True) * 2\ndst = torch.tensor([0, 1, 1, 3])\n"
     "out = torch.zeros_like(h).index_add_(0, dst, h)\nout\n", "out",
     dict(requires_grad=True, is_leaf=False, shape=(4, 2))),
    ("import torch\nm = torch.randn(3, requires_grad=True) * 2\n"
     "o = torch.zeros(5).scatter_add_(0, torch.tensor([0, 2, 4]), m)\no\n", "o",
     dict(requires_grad=True, is_leaf=False, shape=(5,))),
    ("import torch\nw = torch.randn(3, requires_grad=True)\n"
     "a = torch.zeros(3).addcmul_(torch.ones(3), w * 2)\na\n", "a",
     dict(requires_grad=True, is_leaf=False, shape=(3,))),
    ("import torch\ns = torch.randn(3, requires_grad=True).sum()\n"
     "f = torch.zeros(3).masked_fill_(torch.tensor([True, False, True]), s)\nf\n", "f",
     dict(requires_grad=True, is_leaf=False, shape=(3,))),
    ("import torch\nw = torch.randn(3, requires_grad=True) * 2\n"
     "k = torch.zeros(3).index_fill_(0, torch.tensor([1]), 5.0)\nk\n", "k",
     dict(requires_grad=False, is_leaf=True, shape=(3,))),
    # `.type(torch.DoubleTensor)` (an old notebook's precision): a copy, not a leaf.
    ("import torch\ndtype = torch.DoubleTensor\nw = torch.randn(3, 2, requires_grad=True).type(dtype)\nw\n", "w",
     dict(requires_grad=True, is_leaf=False, dtype="float64", shape=(3, 2), grad_fn="ToCopyBackward0")),
    ("import torch\nw = torch.zeros(2, requires_grad=True).type('torch.FloatTensor')\nw\n", "w",
     dict(requires_grad=True, is_leaf=True, dtype="float32", shape=(2,))),
    # Indices: argsort keeps the shape; NumPy's counts are integers.
    ("import torch\na = torch.randn(3, 5, requires_grad=True).argsort(dim=1)\na\n", "a",
     dict(requires_grad=False, dtype="int64", shape=(3, 5))),
    ("import numpy as np\nimport torch\nlabels = np.random.RandomState(0).choice(4, size=20)\n"
     "c = torch.as_tensor(np.bincount(labels, minlength=4))\nc\n", "c", dict(requires_grad=False, dtype="int64")),
    # Index tensors side by side broadcast into one block of dims.
    *[("import torch\nx = torch.randn(4, 16, 32, requires_grad=True)\ni = torch.arange(4)\n"
       f"j = torch.randint(0, 16, (4,))\nr = x[{index}]\nr\n", "r", dict(requires_grad=True, shape=shape))
      for index, shape in (("i, j", (4, 32)), (":, j", (4, 4, 32)), ("i, :, 0", (4, 16)), ("i, j, 0", (4,)))],
    # Self-attention keeps the query's shape.
    ("import torch\nattn = torch.nn.MultiheadAttention(8, 2, batch_first=True)\nq = torch.randn(3, 5, 8)\n"
     "a, _ = attn(q, q, q, need_weights=False)\na\n", "a", dict(requires_grad=True, shape=(3, 5, 8))),
    # A permutation of a batch, and draws of a distribution per sample of it.
    ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
     "beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))\n"
     "for (xb,) in DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4):\n"
     "    p = torch.randperm(xb.size(0)) + beta.sample((xb.size(0),)).long()\n"
     "p\n", "p", dict(requires_grad=False, dtype="int64")),
    # Batches of rows that carry a graph (features a model made) carry it on.
    ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
     "feats = torch.nn.Linear(3, 2)(torch.randn(8, 3))\n"
     "for (xb,) in DataLoader(TensorDataset(feats), batch_size=4):\n    pass\nxb\n", "xb",
     dict(requires_grad=True, is_leaf=False, grad_fn="StackBackward0")),
    # Prioritised replay: priorities appended in a loop (the first one the default
    # of `max` over none), drawn from by index.
    ("import torch\nprios = []\nfor k in range(20):\n    prios.append(max(prios, default=1.0))\n"
     "idx = torch.multinomial(torch.tensor(prios), 16, replacement=True)\nidx\n", "idx",
     dict(requires_grad=False, dtype="int64", shape=(16,))),
]


@pytest.mark.parametrize("source,name,expected", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_facts(source, name, expected):
    value = facts(source, name)
    assert isinstance(value, TensorFacts)
    for key, want in expected.items():
        assert getattr(value, key) == want, f"{key}: {getattr(value, key)!r} != {want!r}"


@pytest.mark.parametrize("source,name,expected", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_facts_match_torch(source, name, expected):
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    value = namespace[name]
    truth = {
        "requires_grad": value.requires_grad,
        "is_leaf": value.is_leaf,
        "dtype": str(value.dtype).replace("torch.", ""),
        "shape": tuple(value.shape),
        "grad_fn": type(value.grad_fn).__name__ if value.grad_fn is not None else None,
        "grad": None if not value.is_leaf else ("none" if value.grad is None else "set"),
    }
    for key, want in expected.items():
        if want is None:
            continue        # unknown to the analysis: nothing to compare
        assert truth[key] == want, f"{key}: torch says {truth[key]!r}, analysis {want!r}"


def test_unknown_stays_unknown():
    value = facts("import torch\ndef f(model, x):\n    y = model(x)\n    return y\n", "y")
    assert not isinstance(value, TensorFacts) or value.requires_grad is None


def test_freed_graph_is_known():
    src = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny\n"
    assert facts(src, "y", line=5).graph_freed is True
    assert facts(src, "y", line=4).graph_freed is False
    kept = src.replace("y.backward()", "y.backward(retain_graph=True)")
    assert facts(kept, "y", line=5).graph_freed is False


def test_broadcast_with_sizes_not_known():
    from autograd_lsp.analysis.semantics.shapes import broadcast
    # An unknown size beside a known one is 1 or the same (or the op raises).
    assert broadcast((2, None), (2, 6)) == (2, 6)
    assert broadcast((None, 1), (1,)) == (None, 1)
    assert broadcast((None,), (None,)) == (None,)
    assert broadcast((3,), (4,)) is None
    assert broadcast((3,), None) is None


@pytest.mark.parametrize("start,first", [("", 0), (", start=1", 1), (", 5", 5)])
def test_the_first_pass_of_enumerate_sees_its_start(start, first):
    value = facts("import torch\n"
                  f"i, x = next(enumerate(torch.randn(30, 2).unbind(0){start}))\n"
                  "i\n", "i")
    assert getattr(value, "value", None) == first
    torch = pytest.importorskip("torch")
    assert next(enumerate(torch.randn(30, 2).unbind(0), *((first,) if start else ())))[0] == first


def test_nonzero_has_a_row_per_true_and_a_column_per_dimension():
    value = facts("import torch\nm = torch.randn(4, 3) > 0\nidx = torch.nonzero(m)\nidx\n", "idx")
    torch = pytest.importorskip("torch")
    assert value.shape[1] == torch.nonzero(torch.randn(4, 3) > 0).shape[1] == 2


def test_splitting_gives_a_piece_even_of_an_empty_dimension():
    """A loop over `x.split(k)` runs at least once; over `x.unbind()`, maybe not."""
    torch = pytest.importorskip("torch")
    empty = torch.empty(0, 4)
    assert len(empty.split(4)) >= 1 and len(empty.chunk(2)) >= 1 and len(empty.tensor_split(2)) >= 1
    assert len(empty.unbind()) == 0


def test_a_permutation_a_range_and_per_sample_draws_of_a_batch_have_its_length():
    value = facts("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                  "beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))\n"
                  "for (xb,) in DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4):\n"
                  "    p = torch.randperm(xb.size(0)) * beta.sample((xb.size(0),)) + torch.arange(xb.size(0))\n"
                  "p\n", "p")
    assert len(value.shape) == 1 and getattr(value.shape[0], "first", None) == 4


def test_a_tensor_of_a_list_of_unknown_length_has_its_items_dimensions():
    source = ("import torch\nrows = []\nfor k in range(50):\n    rows.append((float(k), 0.0, 1.0))\n"
              "t = torch.tensor(rows)\nt\n")
    value = facts(source, "t")
    assert (value.shape, value.dtype) == ((None, 3), "float32")
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    assert tuple(namespace["t"].shape)[1:] == (3,) and namespace["t"].dtype == torch.float32
