"""AG113 removed-backward-keyword: `backward(retain_variables=...)`, the spelling
of `retain_graph=` before torch 0.2, which torch no longer accepts."""
from __future__ import annotations

from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import renamed_keyword, without_keyword

OLD, NEW = "retain_variables", "retain_graph"
RUNTIME = f"got an unexpected keyword argument '{OLD}'"


class RemovedBackwardKeyword(Rule):
    code = "AG113"
    name = "removed-backward-keyword"
    severity = "error"
    summary = {
        "en": "backward(retain_variables=...): the pre-0.2 name of retain_graph, no longer accepted",
        "zh": "backward(retain_variables=...)：retain_graph 在 torch 0.2 之前的旧名，如今已不被接受",
    }
    explanation = {
        "en": (
            "torch 0.2 (2017) renamed the `retain_variables` keyword of `backward()` and "
            "`torch.autograd.grad()` to `retain_graph`, and warned about the old name until it was "
            "removed. Code copied from older tutorials now stops at the call with `TypeError: "
            f"Tensor.backward() {RUNTIME}`. The meaning is unchanged: `retain_graph=True` keeps "
            "the graph's saved tensors so that a second backward through the same graph works."
        ),
        "zh": (
            "torch 0.2（2017 年）把 `backward()` 与 `torch.autograd.grad()` 的关键字 `retain_variables` "
            "改名为 `retain_graph`，旧名在被移除前一直给出警告。照抄旧教程的代码如今会在这一调用处停下："
            f"`TypeError: Tensor.backward() {RUNTIME}`。含义没有变：`retain_graph=True` 保留计算图"
            "保存的张量，使第二次经过同一张图的 backward 能够进行。"
        ),
    }
    messages = {
        "en": {"message": f"`{OLD}=` was renamed `{NEW}=` in torch 0.2 and is no longer accepted: "
                          f"the call raises TypeError: {RUNTIME}",
               "fix": f"Rename to {NEW}="},
        "zh": {"message": f"`{OLD}=` 已在 torch 0.2 改名为 `{NEW}=`，如今不再被接受：该调用会抛出 "
                          f"TypeError: {RUNTIME}",
               "fix": f"改名为 {NEW}="},
    }

    bad = (
        Example(
            "import torch\n"
            "from torch.autograd import Variable\n"
            "x = Variable(torch.randn(4), requires_grad=True)\n"
            "y = (x * x).sum()\n"
            "y.backward(retain_variables=True)\n"
            "y.backward()\n",
            Raises("TypeError", RUNTIME), line=5,
            fixed=(
                "import torch\n"
                "from torch.autograd import Variable\n"
                "x = Variable(torch.randn(4), requires_grad=True)\n"
                "y = (x * x).sum()\n"
                "y.backward(retain_graph=True)\n"
                "y.backward()\n")),
        Example(
            # Style transfer in the 0.2 manner: two losses share the features of one
            # forward pass, so the first backward keeps the graph.
            "import torch\n"
            "import torch.nn as nn\n"
            "features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())\n"
            "image = torch.rand(1, 3, 8, 8, requires_grad=True)\n"
            "optimizer = torch.optim.LBFGS([image])\n"
            "def closure():\n"
            "    optimizer.zero_grad()\n"
            "    f = features(image)\n"
            "    content_loss = f.pow(2).mean()\n"
            "    style_loss = (f.mean(dim=(2, 3)) - 0.5).pow(2).sum()\n"
            "    content_loss.backward(retain_variables=True)\n"
            "    style_loss.backward()\n"
            "    return content_loss + style_loss\n"
            "optimizer.step(closure)\n",
            Raises("TypeError", RUNTIME), line=11),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "loss = (w ** 3).sum()\n"
            "(g,) = torch.autograd.grad(loss, w, create_graph=True, retain_variables=True)\n"
            "g.sum().backward()\n",
            Raises("TypeError", RUNTIME), line=4),
        Example(
            # A two-headed network trained from one shared trunk: the loss of the
            # first head keeps the trunk's graph for the second.
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import Variable\n"
            "class TwoHeads(nn.Module):\n"
            "    def __init__(self):\n"
            "        super(TwoHeads, self).__init__()\n"
            "        self.trunk = nn.Linear(6, 8)\n"
            "        self.cls = nn.Linear(8, 3)\n"
            "        self.reg = nn.Linear(8, 1)\n"
            "    def forward(self, x):\n"
            "        h = F.relu(self.trunk(x))\n"
            "        return self.cls(h), self.reg(h)\n"
            "net = TwoHeads()\n"
            "opt = torch.optim.SGD(net.parameters(), lr=0.01)\n"
            "def train_step(x, labels, targets):\n"
            "    opt.zero_grad()\n"
            "    logits, value = net(Variable(x))\n"
            "    cls_loss = F.cross_entropy(logits, Variable(labels))\n"
            "    reg_loss = F.mse_loss(value, Variable(targets))\n"
            "    cls_loss.backward(retain_variables=True)\n"
            "    reg_loss.backward()\n"
            "    opt.step()\n"
            "    return cls_loss.item() + reg_loss.item()\n"
            "train_step(torch.randn(5, 6), torch.tensor([0, 2, 1, 1, 0]), torch.randn(5, 1))\n",
            Raises("TypeError", RUNTIME), line=21),
    )
    good = (
        Example(
            "import torch\n"
            "x = torch.randn(4, requires_grad=True)\n"
            "y = (x * x).sum()\n"
            "y.backward(retain_graph=True)\n"
            "y.backward()\n"),
        Example(
            # A hand-written layer of a numpy-style network: its own backward, its own keywords.
            "class Dense:\n"
            "    def __init__(self, w):\n"
            "        self.w = w\n"
            "    def backward(self, grad, retain_variables=False):\n"
            "        self.cache = grad if retain_variables else None\n"
            "        return grad * self.w\n"
            "import torch\n"
            "layer = Dense(2.0)\n"
            "g = layer.backward(torch.ones(3), retain_variables=True)\n"),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "loss = (w ** 3).sum()\n"
            "(g,) = torch.autograd.grad(loss, w, create_graph=True, retain_graph=True)\n"
            "g.sum().backward()\n"),
    )

    def check(self, trace, locale):
        for event in trace.differentiations():
            keyword = next((kw for kw in event.node.keywords if kw.arg == OLD), None)
            if keyword is None:
                continue
            fixed = without_keyword(event.node, OLD, event) if NEW in event.kwargs \
                else renamed_keyword(event.node, OLD, NEW, event)
            yield Report(keyword, self.text("message", locale),
                         (FixSpec(self.text("fix", locale), (Edit("replace", event.node, fixed, event),)),),
                         event)
