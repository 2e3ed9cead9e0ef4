"""AG114 zero-dim-index: `loss.data[0]` / `loss[0]` on a 0-dim tensor, the way to
read a number before torch 0.4."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import receiver_text
from autograd_lsp.analysis.trace import IndexEvent

RUNTIME = "invalid index of a 0-dim tensor"
RUNTIME_OTHER = "is out of bounds for dimension 0 with size 0"


class ZeroDimIndex(Rule):
    code = "AG114"
    name = "zero-dim-index"
    severity = "error"
    summary = {
        "en": "loss.data[0] or loss[0] on a 0-dim tensor; read the number with .item()",
        "zh": "对 0 维张量使用 loss.data[0] 或 loss[0]；应使用 .item() 取出数值",
    }
    explanation = {
        "en": (
            "Before torch 0.4 a reduced loss was a tensor of one element, and tutorials read "
            "its value with `loss.data[0]`. Since 0.4 reductions (`.sum()`, `.mean()`, a "
            "criterion with its default `reduction`) give a 0-dim tensor, which has no index 0: "
            "0.4 warned, and torch 1.0 and later raise `IndexError: invalid index of a 0-dim "
            "tensor. Use `tensor.item()` ...`. `loss.item()` gives the Python number the old "
            "code meant, without the graph."
        ),
        "zh": (
            "在 torch 0.4 之前，归约后的损失是只含一个元素的张量，教程用 `loss.data[0]` 读取它的值。"
            "自 0.4 起，归约（`.sum()`、`.mean()`、默认 `reduction` 的损失函数）得到的是 0 维张量，"
            "没有下标 0：0.4 给出警告，torch 1.0 及以后会抛出 `IndexError: invalid index of a 0-dim "
            "tensor. Use `tensor.item()` ...`。`loss.item()` 给出旧代码想要的 Python 数字，且不带计算图。"
        ),
    }
    messages = {
        "en": {"zero": f"`{{name}}` is a 0-dim tensor (since torch 0.4): indexing it raises "
                       f"IndexError: {RUNTIME}; read the number with `{{name}}.item()`",
               "other": f"`{{name}}` is a 0-dim tensor (since torch 0.4): `[{{index}}]` raises "
                        f"IndexError: index {{index}} {RUNTIME_OTHER}",
               "fix": "Use {name}.item()"},
        "zh": {"zero": f"`{{name}}` 是 0 维张量（自 torch 0.4 起）：对它取下标会抛出 "
                       f"IndexError: {RUNTIME}；请用 `{{name}}.item()` 取出数值",
               "other": f"`{{name}}` 是 0 维张量（自 torch 0.4 起）：`[{{index}}]` 会抛出 "
                        f"IndexError: index {{index}} {RUNTIME_OTHER}",
               "fix": "改用 {name}.item()"},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.autograd import Variable\n"
            "model = nn.Linear(10, 1)\n"
            "loss_fn = nn.MSELoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)\n"
            "x = Variable(torch.randn(32, 10))\n"
            "y = Variable(torch.randn(32, 1))\n"
            "for t in range(5):\n"
            "    y_pred = model(x)\n"
            "    loss = loss_fn(y_pred, y)\n"
            "    print(t, loss.data[0])\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n",
            Raises("IndexError", RUNTIME), line=12),
        Example(
            # The two-layer network of the 0.3 autograd tutorials, weights as Variables.
            "import torch\n"
            "from torch.autograd import Variable\n"
            "N, D_in, H, D_out = 16, 20, 8, 2\n"
            "x = Variable(torch.randn(N, D_in), requires_grad=False)\n"
            "y = Variable(torch.randn(N, D_out), requires_grad=False)\n"
            "w1 = Variable(torch.randn(D_in, H), requires_grad=True)\n"
            "w2 = Variable(torch.randn(H, D_out), requires_grad=True)\n"
            "learning_rate = 1e-4\n"
            "for t in range(3):\n"
            "    y_pred = x.mm(w1).clamp(min=0).mm(w2)\n"
            "    loss = (y_pred - y).pow(2).sum()\n"
            "    print(t, loss.data[0])\n"
            "    loss.backward()\n"
            "    w1.data -= learning_rate * w1.grad.data\n"
            "    w2.data -= learning_rate * w2.grad.data\n"
            "    w1.grad.data.zero_()\n"
            "    w2.grad.data.zero_()\n",
            Raises("IndexError", RUNTIME), line=12),
        Example(
            # A training function reading the loss of an unknown model: the criterion
            # with its default reduction is what makes the loss 0-dim.
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import Variable\n"
            "def train_epoch(model, batches, optimizer, log_every=2):\n"
            "    model.train()\n"
            "    running = 0.0\n"
            "    for i, (data, target) in enumerate(batches):\n"
            "        data, target = Variable(data), Variable(target)\n"
            "        optimizer.zero_grad()\n"
            "        output = model(data)\n"
            "        loss = F.nll_loss(output, target)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        running += loss.data[0]\n"
            "        if i % log_every == 0:\n"
            "            print('batch', i, running / (i + 1))\n"
            "    return running\n"
            "net = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))\n"
            "batches = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(3)]\n"
            "train_epoch(net, batches, torch.optim.SGD(net.parameters(), lr=0.1))\n",
            Raises("IndexError", RUNTIME), line=15),
        Example(
            # A trainer whose model and data arrive from outside: the criterion alone
            # proves the loss 0-dim.
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "class Trainer(object):\n"
            "    def __init__(self, model, lr=0.05):\n"
            "        self.model = model\n"
            "        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "        self.history = []\n"
            "    def step(self, images, labels):\n"
            "        self.optimizer.zero_grad()\n"
            "        loss = F.cross_entropy(self.model(images), labels)\n"
            "        loss.backward()\n"
            "        self.optimizer.step()\n"
            "        self.history.append(loss.data[0])\n"
            "trainer = Trainer(nn.Linear(5, 3))\n"
            "trainer.step(torch.randn(8, 5), torch.randint(0, 3, (8,)))\n",
            Raises("IndexError", RUNTIME), line=14,
            fixed=(
                "import torch\n"
                "import torch.nn as nn\n"
                "import torch.nn.functional as F\n"
                "class Trainer(object):\n"
                "    def __init__(self, model, lr=0.05):\n"
                "        self.model = model\n"
                "        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
                "        self.history = []\n"
                "    def step(self, images, labels):\n"
                "        self.optimizer.zero_grad()\n"
                "        loss = F.cross_entropy(self.model(images), labels)\n"
                "        loss.backward()\n"
                "        self.optimizer.step()\n"
                "        self.history.append(loss.item())\n"
                "trainer = Trainer(nn.Linear(5, 3))\n"
                "trainer.step(torch.randn(8, 5), torch.randint(0, 3, (8,)))\n")),
        Example(
            "import torch\n"
            "scores = torch.randn(5, requires_grad=True)\n"
            "total = scores.sum()\n"
            "print(total.data[1])\n",
            Raises("IndexError", f"index 1 {RUNTIME_OTHER}"), line=4),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(10, 1)\n"
            "loss_fn = nn.MSELoss()\n"
            "x, y = torch.randn(32, 10), torch.randn(32, 1)\n"
            "loss = loss_fn(model(x), y)\n"
            "print(loss.item(), loss.data.item())\n"
            "t = torch.randn(3, requires_grad=True)\n"
            "first = t.data[0]\n"
            "row = model.weight.data[0]\n"),
        Example(
            # Per-sample losses keep a dimension: their first element exists.
            "import torch\n"
            "import torch.nn as nn\n"
            "loss_fn = nn.MSELoss(reduction='none')\n"
            "pred, target = torch.randn(4, 1), torch.randn(4, 1)\n"
            "per_sample = loss_fn(pred, target)\n"
            "print(per_sample[0], per_sample.data[0])\n"),
        Example(
            "import torch\n"
            "losses = torch.randn(3)\n"
            "best = losses.min()\n"
            "print(best[None][0], best[...], losses[0], losses.data[-1])\n"
            "values, indices = torch.randn(4, 3).max(dim=1)\n"
            "print(values[0], indices[0])\n"),
        Example(
            "import torch\n"
            "def report(loss):\n"
            "    print(loss[0])\n"
            "report(torch.randn(3).pow(2))\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(IndexEvent):
            index = _integer_index(event.node)
            if index is None or not isinstance(event.base, TensorFacts) or event.base.shape != ():
                continue
            # `loss.data[0]` reads the number of `loss`: `.item()` needs no `.data`. The
            # receiver keeps its parentheses: `(a + b).data[0]` is `(a + b).item()`.
            name = receiver_text(event.node.value if event.via_data else event.node, event)
            if index != 0:
                message = self.text("other", locale, name=name, index=index)
            else:
                message = self.text("zero", locale, name=name)
            fixes = ()
            if index in (0, -1):
                fixes = (FixSpec(self.text("fix", locale, name=name),
                                 (Edit("replace", event.node, f"{name}.item()", event),)),)
            yield Report(event.node, message, fixes, event)


def _integer_index(node: ast.Subscript) -> int | None:
    """The literal integer of `t[0]` / `t[-1]`; None for anything else."""
    value, sign = node.slice, 1
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value, sign = value.operand, -1
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return sign * value.value
    return None
