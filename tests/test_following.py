"""What the analysis follows through real code: calls with every argument, user
classes and nn.Modules, containers, loops and branches, grad modes. Each case
states the facts of one name at the end of a small program; the same program is
run with torch and must agree on every fact the analysis claims."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import Analyzer
from autograd_lsp.analysis.facts import TensorFacts

HEAD = "import torch\nimport torch.nn as nn\nimport random\n"

CASES = {
    # 1. calls: positional, keyword and default arguments, tuples returned
    "tuple-returned": (
        "def step(model, x):\n"
        "    out = model(x)\n"
        "    return out, out.pow(2).mean()\n"
        "net = nn.Linear(3, 2)\n"
        "out, loss = step(net, torch.randn(4, 3))\n"
        "loss\n",
        "loss", dict(requires_grad=True, is_leaf=False, shape=(), grad_fn="MeanBackward0")),
    "keywords-and-defaults": (
        "def scaled(x, scale=2.0, *, power=2):\n"
        "    return (x * scale) ** power\n"
        "w = torch.ones(5, requires_grad=True)\n"
        "y = scaled(w, power=3)\n"
        "y\n",
        "y", dict(requires_grad=True, shape=(5,), grad_fn="PowBackward0")),
    # 2. objects: attributes set in __init__ are known in every method
    "trainer-attributes": (
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.model = nn.Linear(3, 1)\n"
        "        self.criterion = nn.MSELoss()\n"
        "    def loss(self, x, y):\n"
        "        return self.criterion(self.model(x), y)\n"
        "trainer = Trainer()\n"
        "loss = trainer.loss(torch.randn(4, 3), torch.randn(4, 1))\n"
        "loss\n",
        "loss", dict(requires_grad=True, is_leaf=False, shape=(), grad_fn="MseLossBackward0")),
    "module-forward-through-self-layers": (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.body = nn.Sequential(nn.Linear(3, 5), nn.ReLU())\n"
        "        self.head = nn.Linear(5, 2)\n"
        "    def forward(self, x):\n"
        "        return self.head(self.body(x))\n"
        "out = Net()(torch.randn(4, 3))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(4, 2))),
    "layer-replaced-in-a-sequential": (
        "net = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))\n"
        "for p in net.parameters():\n"
        "    p.requires_grad = False\n"
        "net[2] = nn.Linear(5, 4)\n"
        "out = net(torch.randn(4, 3))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(4, 4))),
    "parameter-by-attribute": (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.encoder = nn.Linear(3, 4)\n"
        "net = Net()\n"
        "w = net.encoder.weight\n"
        "w\n",
        "w", dict(requires_grad=True, is_leaf=True, shape=(4, 3), grad="none")),
    "frozen-parameters": (
        "net = nn.Linear(3, 2)\n"
        "for p in net.parameters():\n"
        "    p.requires_grad = False\n"
        "out = net(torch.randn(4, 3))\n"
        "out\n",
        "out", dict(requires_grad=False, shape=(4, 2))),
    "registered-buffer": (
        "class Norm(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(3))\n"
        "s = Norm().scale\n"
        "s\n",
        "s", dict(requires_grad=False, shape=(3,))),
    # 3. nn semantics
    "lstm-returns-a-tuple": (
        "lstm = nn.LSTM(input_size=3, hidden_size=5, batch_first=True)\n"
        "seq, (h, c) = lstm(torch.randn(2, 7, 3))\n"
        "h\n",
        "h", dict(requires_grad=True, shape=(1, 2, 5))),
    "bidirectional-gru": (
        "gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)\n"
        "out, h = gru(torch.randn(7, 2, 3))\n"
        "out\n",
        "out", dict(requires_grad=True, shape=(7, 2, 8))),
    "per-sample-loss": (
        "criterion = nn.CrossEntropyLoss(reduction='none')\n"
        "logits = nn.Linear(3, 4)(torch.randn(6, 3))\n"
        "loss = criterion(logits, torch.randint(0, 4, (6,)))\n"
        "loss\n",
        "loss", dict(requires_grad=True, shape=(6,))),
    "bitwise-labels": (
        "x = torch.randint(0, 10, (64, 3))\n"
        "mask = (x[:, 0] > 2) | (x[:, 1] < 1)\n"
        "mask &= x[:, 2] != 3\n"
        "y = ((x[:, 0] % 2) ^ mask.long()).float()\n"
        "y\n",
        "y", dict(requires_grad=False, is_leaf=True, shape=(64,))),
    "where-of-numbers": (
        "y = torch.randn(64)\n"
        "w = torch.where(y > 0, 2.0, 1.0)\n"
        "weights = w / w.sum()\n"
        "weights\n",
        "weights", dict(requires_grad=False, is_leaf=True, shape=(64,))),
    "parameters-as-one-vector": (
        "policy = nn.Linear(4, 3)\n"
        "flat = torch.nn.utils.parameters_to_vector(policy.parameters())\n"
        "flat\n",
        "flat", dict(requires_grad=True, is_leaf=False, shape=(15,), grad_fn="CatBackward0")),
    "module-by-dotted-name": (
        "net = nn.Sequential(nn.Linear(2, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 1)))\n"
        "layer = dict(net.named_modules())['1.1']\n"
        "out = layer(torch.randn(3, 4))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(3, 1))),
    "hardest-by-index": (
        "losses = torch.randn(10, requires_grad=True) * 2\n"
        "hard = losses.detach().topk(4).indices\n"
        "picked = [losses[i] for i in hard.tolist()]\n"
        "first = picked[0]\n"
        "first\n",
        "first", dict(requires_grad=True, is_leaf=False, shape=())),
    "topk-indices": (
        "scores = torch.randn(6, 10)\n"
        "top = scores.topk(3).indices\n"
        "top\n",
        "top", dict(requires_grad=False, is_leaf=True, shape=(6, 3))),
    "transformer-encoder-stack": (
        "layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, batch_first=True)\n"
        "encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)\n"
        "out = encoder.layers[1](encoder(torch.randn(3, 5, 8)))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(3, 5, 8))),
    "namedtuple-output": (
        "from collections import namedtuple\n"
        "Out = namedtuple('Out', 'loss, logits')\n"
        "def step(model, x):\n"
        "    logits = model(x)\n"
        "    return Out(logits.mean(), logits=logits)\n"
        "out = step(nn.Linear(3, 2), torch.randn(4, 3))\n"
        "loss, logits = out\n"
        "picked = out.logits * loss.item()\n"
        "picked\n",
        "picked", dict(requires_grad=True, is_leaf=False, shape=(4, 2), grad_fn="MulBackward0")),
    "namedtuple-class-unpacked": (
        "from typing import NamedTuple\n"
        "class Out(NamedTuple):\n"
        "    loss: torch.Tensor\n"
        "    logits: torch.Tensor\n"
        "net = nn.Linear(3, 2)\n"
        "logits = net(torch.randn(4, 3))\n"
        "loss, logits = Out(logits.mean(), logits)\n"
        "loss\n",
        "loss", dict(requires_grad=True, is_leaf=False, shape=(), grad_fn="MeanBackward0")),
    "transformer-decoder-stack": (
        "layer = nn.TransformerDecoderLayer(8, nhead=2, dim_feedforward=16, batch_first=True)\n"
        "decoder = nn.TransformerDecoder(layer, 2)\n"
        "out = decoder(torch.randn(2, 3, 8), torch.randn(2, 4, 8))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False)),
    # 5. containers
    "children-by-name": (
        "cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 3, padding=1))\n"
        "feats, x = {}, torch.rand(1, 3, 8, 8)\n"
        "for name, layer in cnn._modules.items():\n"
        "    x = layer(x)\n"
        "    feats[name] = x\n"
        "last = feats['2']\n"
        "last\n",
        "last", dict(requires_grad=True, is_leaf=False, shape=(1, 2, 8, 8))),
    "list-then-stack": (
        "w = torch.ones(4, requires_grad=True)\n"
        "rows = []\n"
        "for k in range(3):\n"
        "    rows.append(w * k)\n"
        "m = torch.stack(rows)\n"
        "m\n",
        "m", dict(requires_grad=True, grad_fn="StackBackward0")),
    "comprehension-then-stack": (
        "w = torch.ones(4, requires_grad=True)\n"
        "m = torch.stack([w * k for k in range(3)])\n"
        "m\n",
        "m", dict(requires_grad=True, shape=(3, 4), grad_fn="StackBackward0")),
    "dict-output": (
        "def forward(x, w):\n"
        "    y = x @ w\n"
        "    return {'logits': y, 'loss': y.pow(2).mean()}\n"
        "w = torch.randn(3, 2, requires_grad=True)\n"
        "outputs = forward(torch.randn(5, 3), w)\n"
        "loss = outputs['loss']\n"
        "loss\n",
        "loss", dict(requires_grad=True, shape=(), grad_fn="MeanBackward0")),
    "items-of-a-dict": (
        "w = torch.ones(2, requires_grad=True)\n"
        "parts = {'a': w * 2, 'b': w * 3}\n"
        "total = 0\n"
        "for name, part in parts.items():\n"
        "    total = total + part.sum()\n"
        "total\n",
        "total", dict(requires_grad=True, shape=())),
    # 6. grad modes
    "no-grad-decorator": (
        "@torch.no_grad()\n"
        "def predict(model, x):\n"
        "    return model(x)\n"
        "pred = predict(nn.Linear(3, 1), torch.randn(2, 3))\n"
        "pred\n",
        "pred", dict(requires_grad=False, shape=(2, 1))),
    "set-grad-enabled-statement": (
        "w = torch.ones(2, requires_grad=True)\n"
        "torch.set_grad_enabled(False)\n"
        "y = w * 2\n"
        "torch.set_grad_enabled(True)\n"
        "y\n",
        "y", dict(requires_grad=False)),
    # 9. flow: loops reach a fixpoint, branches keep what both paths agree on
    "items-appended-in-a-branch": (
        "w = torch.ones(2, requires_grad=True)\n"
        "parts = []\n"
        "for k in range(3):\n"
        "    if k % 2 == 0:\n"
        "        parts.append(w * k)\n"
        "first = parts[0]\n"
        "first\n",
        "first", dict(requires_grad=True, is_leaf=False, shape=(2,), grad_fn="MulBackward0")),
    "layer-picked-by-an-unknown-index": (
        "net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))\n"
        "def features(x):\n"
        "    for i in range(len(net)):\n"
        "        x = net[i](x)\n"
        "    return x\n"
        "out = features(torch.randn(5, 3, requires_grad=True))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False)),
    "long-loop": (
        "w = torch.ones(2, requires_grad=True)\n"
        "h = w\n"
        "for _ in range(100):\n"
        "    h = torch.tanh(h * 2)\n"
        "h\n",
        "h", dict(requires_grad=True, is_leaf=False, shape=(2,), grad_fn="TanhBackward0")),
    "branches-agree": (
        "w = torch.ones(2, requires_grad=True)\n"
        "if random.random() > 0.5:\n"
        "    y = w * 2\n"
        "else:\n"
        "    y = w * 3\n"
        "y\n",
        "y", dict(requires_grad=True, is_leaf=False, shape=(2,), grad_fn="MulBackward0")),
    "random-choice-of-pairs": (
        "pairs = [(torch.ones(3, requires_grad=True), torch.zeros(3)) for _ in range(2)]\n"
        "x, y = random.choice(pairs)\n"
        "random.shuffle(pairs)\n"
        "z = x * 2\n"
        "z\n",
        "z", dict(requires_grad=True, is_leaf=False, shape=(3,), grad_fn="MulBackward0")),
    "endless-generator-passed-inline": (
        "def batches():\n"
        "    while True:\n"
        "        yield torch.ones(2, requires_grad=True) * 2\n"
        "def first(it):\n"
        "    return next(it)\n"
        "z = first(batches())\n"
        "z\n",
        "z", dict(requires_grad=True, is_leaf=False, shape=(2,), grad_fn="MulBackward0")),
    "call-named-by-an-alias": (
        "class Scorer:\n"
        "    def __init__(self, w):\n"
        "        self.w = w\n"
        "    def forward(self, x):\n"
        "        return self.w * x\n"
        "    __call__ = forward\n"
        "scorer = Scorer(torch.ones(3, requires_grad=True))\n"
        "out = scorer(torch.ones(3))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(3,), grad_fn="MulBackward0")),
    "unbind-along-the-last-dim": (
        "head = nn.Linear(16, 2)\n"
        "start_logits, end_logits = head(torch.randn(4, 12, 16)).unbind(-1)\n"
        "start_logits\n",
        "start_logits", dict(requires_grad=True, is_leaf=False, shape=(4, 12))),
    "zero-grad-clears": (
        "net = nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "net(torch.randn(4, 3)).sum().backward()\n"
        "opt.zero_grad()\n"
        "b = net.bias\n"
        "b\n",
        "b", dict(is_leaf=True, grad="none")),
    # A short `range` loop that builds (no backward, step or loop inside) runs number
    # by number: the list holds every layer.
    "layers-built-by-a-short-range": (
        "class MLP(nn.Module):\n"
        "    def __init__(self, width=8, depth=3):\n"
        "        super().__init__()\n"
        "        layers, d_in = [], 2\n"
        "        for _ in range(depth):\n"
        "            layers += [nn.Linear(d_in, width), nn.Tanh()]\n"
        "            d_in = width\n"
        "        layers.append(nn.Linear(width, 1))\n"
        "        self.net = nn.Sequential(*layers)\n"
        "    def forward(self, x):\n"
        "        return self.net(x)\n"
        "u = MLP()(torch.rand(16, 2))\n"
        "u\n",
        "u", dict(requires_grad=True, is_leaf=False, shape=(16, 1))),
    "epoch-numbers-of-a-short-range": (
        "def loss_of(w, epoch):\n"
        "    loss = torch.tensor(0.0)\n"
        "    if epoch > 0:\n"
        "        loss = loss + (w ** 2).sum()\n"
        "    return loss\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "losses = []\n"
        "for epoch in range(3):\n"
        "    losses.append(loss_of(w, epoch))\n"
        "first = losses[0]\n"
        "first\n",
        "first", dict(requires_grad=False, is_leaf=True, shape=())),
    # `add_module` on an empty Sequential adds to what its forward runs, by name.
    "children-added-by-name": (
        "model = nn.Sequential()\n"
        "model.add_module('backbone', nn.Sequential(nn.Linear(6, 8), nn.ReLU()))\n"
        "model.add_module('fc', nn.Linear(8, 3))\n"
        "model.append(nn.Tanh())\n"
        "for name, p in model.named_parameters():\n"
        "    p.requires_grad = name.startswith('fc')\n"
        "out = model(torch.randn(5, 6))\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False, shape=(5, 3), grad_fn="TanhBackward0")),
    "children-added-by-name-all-frozen": (
        "model = nn.Sequential()\n"
        "model.add_module('backbone', nn.Linear(6, 8))\n"
        "model.add_module('head', nn.Linear(8, 3))\n"
        "for name, p in model.named_parameters():\n"
        "    p.requires_grad = name.startswith('fc')\n"
        "out = model(torch.randn(5, 6))\n"
        "out\n",
        "out", dict(requires_grad=False, shape=(5, 3))),
    # Options of a script: `parse_args([])` gives exactly the defaults.
    "argparse-defaults": (
        "import argparse\n"
        "def get_args(argv=None):\n"
        "    parser = argparse.ArgumentParser()\n"
        "    group = parser.add_argument_group('model')\n"
        "    group.add_argument('--hidden-size', type=int, default=5)\n"
        "    parser.add_argument('--batch', dest='batch_size', type=int, default=4)\n"
        "    parser.add_argument('--frozen', action='store_true')\n"
        "    return parser.parse_args(argv or [])\n"
        "args = get_args()\n"
        "w = torch.randn(args.batch_size, args.hidden_size, requires_grad=not args.frozen)\n"
        "w\n",
        "w", dict(requires_grad=True, is_leaf=True, shape=(4, 5))),
    # `if memory:` on a replay memory known to be empty takes the other branch.
    "emptiness of a bounded deque": (
        "from collections import deque\n"
        "memory = deque(maxlen=8)\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "if memory:\n"
        "    y = w * 2\n"
        "else:\n"
        "    y = w.detach()\n"
        "y\n",
        "y", dict(requires_grad=False, is_leaf=True, shape=(2,))),
    # Data made with NumPy, as course notebooks do: its shape reaches the tensor.
    "numpy data": (
        "import numpy as np\n"
        "X_np = np.linspace(-3, 3, 64).reshape(-1, 1).astype(np.float32)\n"
        "y_np = np.sin(X_np) + 0.1 * np.random.randn(*X_np.shape).astype(np.float32)\n"
        "X, y = torch.from_numpy(X_np), torch.from_numpy(y_np)\n"
        "w = torch.zeros(1, 1, requires_grad=True)\n"
        "err = (X @ w - y) ** 2 + torch.from_numpy(np.zeros((64, 1), dtype=np.float32)).T.T\n"
        "err\n",
        "err", dict(requires_grad=True, is_leaf=False, shape=(64, 1))),
    # A batched Gaussian-process likelihood: the shapes of a Cholesky factor and of
    # the solves against it.
    "cholesky solves": (
        "a = torch.randn(2, 4, 4, dtype=torch.float64)\n"
        "w = torch.ones(2, 1, 1, dtype=torch.float64, requires_grad=True)\n"
        "K = a @ a.transpose(-2, -1) + w * torch.eye(4, dtype=torch.float64)\n"
        "L = torch.linalg.cholesky(K)\n"
        "y = torch.randn(2, 4, 1, dtype=torch.float64)\n"
        "alpha = torch.cholesky_solve(y, L) + torch.linalg.solve(torch.linalg.inv(K), y)\n"
        "fit = (y * alpha).sum((-2, -1)) + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)\n"
        "fit\n",
        "fit", dict(requires_grad=True, is_leaf=False, shape=(2,))),
    # A collate function pads token sequences; the embeddings of the batch keep
    # the batch dimension and have a graph of their own.
    "padded sequences": (
        "from torch.nn.utils.rnn import pad_sequence\n"
        "emb = nn.Embedding(10, 4, padding_idx=0)\n"
        "seqs = [torch.tensor([1, 2, 3]), torch.tensor([4, 5])]\n"
        "tokens = pad_sequence(seqs, batch_first=True, padding_value=0)\n"
        "out = emb(tokens).sum(-1)\n"
        "out\n",
        "out", dict(requires_grad=True, is_leaf=False)),
    # A decomposition returns a tuple of tensors that keep the input's graph.
    "eigh of features": (
        "w = torch.randn(4, 3, requires_grad=True)\n"
        "phi = torch.nn.functional.normalize(w, dim=1)\n"
        "values, vectors = torch.linalg.eigh(phi.T @ phi)\n"
        "u, s, vh = torch.linalg.svd(vectors)\n"
        "s\n",
        "s", dict(requires_grad=True, is_leaf=False)),
    # A registry's builder runs again inside the `__init__` of what it builds, and a
    # replay memory's sample is regrouped by `zip(*batch)` and stacked.
    "nested registry builds and a replay memory": (
        "import random\n"
        "from collections import deque\n"
        "PARTS = {}\n"
        "def build(registry, cfg):\n"
        "    cfg = dict(cfg)\n"
        "    return registry[cfg.pop('type')](**cfg)\n"
        "class Head(nn.Module):\n"
        "    def __init__(self, width):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(width, 1)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, head, frozen):\n"
        "        super().__init__()\n"
        "        self.head = build(PARTS, head)\n"
        "        for p in self.head.parameters():\n"
        "            p.requires_grad = not frozen\n"
        "    def forward(self, x):\n"
        "        return self.head(x)\n"
        "PARTS['Head'], PARTS['Net'] = Head, Net\n"
        "net = build(PARTS, {'type': 'Net', 'head': {'type': 'Head', 'width': 3}, 'frozen': True})\n"
        "memory = deque(maxlen=10)\n"
        "for _ in range(6):\n"
        "    memory.append((torch.randn(3), 1.0))\n"
        "states, rewards = zip(*random.sample(memory, 4))\n"
        "q = net(torch.stack(states)).squeeze(1)\n"
        "q\n",
        "q", dict(requires_grad=False, is_leaf=True, shape=(4,))),
}


def facts_of(source: str, name: str):
    analyzer = Analyzer()
    analyzer.analyze(source)
    assert not analyzer.internal_errors, analyzer.internal_errors
    lines = source.splitlines()
    row = max(i for i, text in enumerate(lines, 1) if text == name)
    found = analyzer.facts_at(row, 0)
    assert found is not None, f"no facts for {name}"
    return found[1]


@pytest.mark.parametrize("case", CASES)
def test_facts_through_real_code(case):
    body, name, expected = CASES[case]
    value = facts_of(HEAD + body, name)
    assert isinstance(value, TensorFacts), value
    for key, want in expected.items():
        assert getattr(value, key) == want, f"{key}: {getattr(value, key)!r} != {want!r}"


def _torch_facts(value) -> dict:
    return {
        "requires_grad": value.requires_grad,
        "is_leaf": value.is_leaf,
        "shape": tuple(value.shape),
        "grad_fn": type(value.grad_fn).__name__ if value.grad_fn is not None else None,
        "grad": None if not value.is_leaf else ("none" if value.grad is None else "set"),
    }


@pytest.mark.parametrize("case", CASES)
def test_the_same_programs_agree_with_torch(case):
    import torch
    body, name, expected = CASES[case]
    namespace: dict = {}
    torch.manual_seed(0)
    try:
        exec(compile(HEAD + body, f"<{case}>", "exec"), namespace)
    finally:
        torch.set_grad_enabled(True)
    truth = _torch_facts(namespace[name])
    for key, want in expected.items():
        assert truth[key] == want, f"{key}: torch says {truth[key]!r}, the case {want!r}"


def test_recursion_ends():
    source = HEAD + (
        "def deep(n, x):\n"
        "    return x if n == 0 else deep(n - 1, x * 2)\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "y = deep(3, w)\n"
        "y\n")
    value = facts_of(source, "y")
    # Followed to a bounded depth: what it says must be right, and may be nothing.
    assert not isinstance(value, TensorFacts) or value.requires_grad in (True, None)


def test_next_of_what_is_not_an_iterator_leaves_the_analysis_whole():
    # `next(range(3))` raises TypeError at run time; the analysis must not.
    analyzer = Analyzer()
    analyzer.analyze(HEAD + "first = next(range(3))\nw = torch.ones(2, requires_grad=True)\n")
    assert analyzer.internal_errors == []


def test_a_list_of_unknown_length_stacks_to_a_known_row_shape():
    # Twenty numbers are more than a loop runs one by one: its two passes summarise them.
    source = HEAD + (
        "w = torch.ones(4, requires_grad=True)\n"
        "rows = []\n"
        "for k in range(20):\n"
        "    rows.append(w * k)\n"
        "m = torch.stack(rows)\n"
        "c = torch.cat(rows)\n"
        "m\n"
        "c\n")
    assert facts_of(source, "m").shape == (None, 4)
    assert facts_of(source, "c").shape == (None,)
    short = source.replace("range(20)", "range(3)")
    assert facts_of(short, "m").shape == (3, 4)
    assert facts_of(short, "c").shape == (12,)


def test_options_read_from_the_command_line_have_a_type_and_no_value():
    source = HEAD + (
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--batch', type=int, default=4)\n"
        "args = parser.parse_args()\n"
        "w = torch.randn(args.batch, 3)\n"
        "w\n")
    assert facts_of(source, "w").shape == (None, 3)
    # A positional option is on every command line: `parse_args([])` has no value for it.
    positional = source.replace("'--batch', type=int, default=4", "'batch', type=int").replace(
        "parse_args()", "parse_args([])")
    shape = facts_of(positional, "w").shape
    assert shape is None or shape[0] is None


def test_a_dotted_import_binds_its_first_name():
    source = ("import torch\nimport torch.utils.data\nimport torch.nn.functional\n"
              "w = torch.ones(2, requires_grad=True)\n"
              "with torch.no_grad():\n"
              "    y = torch.nn.functional.relu(w)\n"
              "y\n")
    assert facts_of(source, "y").requires_grad is False


def test_an_evaluation_forward_is_reported_once_at_the_model_call():
    """Layers that a module's forward reaches through a helper method (a VAE's
    `encode`) are the model's call, not forwards of their own."""
    from autograd_lsp.analysis import analyze
    source = HEAD + (
        "class VAE(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc1 = nn.Linear(6, 4)\n"
        "    def encode(self, x):\n"
        "        return self.fc1(x)\n"
        "    def forward(self, x):\n"
        "        return self.encode(x)\n"
        "model = VAE()\n"
        "model.eval()\n"
        "for data in [torch.randn(2, 6) for _ in range(3)]:\n"
        "    out = model(data)\n")
    assert [(f.code, f.line) for f in analyze(source)] == [("AG303", 15)]


def test_an_evaluation_helper_is_reported_once_at_its_call_in_the_loop():
    """A helper that runs three forwards, called in an evaluation loop that runs twice:
    one report, at the helper's call in the loop (where `with torch.no_grad():` goes),
    not one per forward inside the helper."""
    from autograd_lsp.analysis import analyze
    source = HEAD + (
        "encoder, head = nn.Linear(6, 4), nn.Linear(4, 2)\n"
        "def predict(x):\n"
        "    return head(encoder(x) + encoder(x))\n"
        "def evaluate(batches):\n"
        "    encoder.eval()\n"
        "    head.eval()\n"
        "    for x in batches:\n"
        "        scores = predict(x)\n"
        "    return scores\n"
        "evaluate([torch.randn(2, 6)])\n"
        "evaluate([torch.randn(3, 6)])\n")
    assert [(f.code, f.line) for f in analyze(source)] == [("AG303", 11)]


def test_a_hook_registered_on_one_path_and_a_gradient_passed_by_name():
    # Neither stops the analysis: a hook on one path only leaves the hooks unknown; a
    # method called on a name bound to `x.grad.data` is not where a None `.grad` is read.
    source = HEAD + (
        "net = nn.Linear(3, 2)\n"
        "if random.random() > 0.5:\n"
        "    net.register_forward_hook(lambda m, i, o: None)\n"
        "x = torch.randn(4, 3, requires_grad=True)\n"
        "out = net(x)\n"
        "def perturb(t, g):\n"
        "    return t + 0.1 * g.sign()\n"
        "def attack():\n"
        "    return perturb(x, x.grad.data)\n"
        "adversarial = attack()\n"
        "out\n")
    assert facts_of(source, "out").shape == (4, 2)


def test_sequential_with_a_layer_not_known():
    """`nn.Sequential(nn.Linear(4, 4), make_block(4))` with `make_block` from a module
    that is not read: its output is unknown, and nothing breaks."""
    analyzer = Analyzer()
    findings = analyzer.analyze(
        "import torch\nimport torch.nn as nn\nfrom blocks import make_block\n"
        "model = nn.Sequential(nn.Linear(4, 4), make_block(4))\n"
        "out = model(torch.randn(2, 4, requires_grad=True))\nout.backward()\n")
    assert analyzer.internal_errors == []
    assert findings == []       # the unknown block may reduce to a scalar
