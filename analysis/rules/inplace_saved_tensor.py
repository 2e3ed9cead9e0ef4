"""AG108 inplace-saved-tensor: changing in place a tensor an op saved for backward."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.call_sites import call_toward, said_at_call
from autograd_lsp.analysis.facts import ObjectRef, TensorFacts
from autograd_lsp.analysis.rule import Example, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import backward_target, source_of, target_node
from autograd_lsp.analysis.trace import InplaceEvent


RUNTIME = "one of the variables needed for gradient computation has been modified by an inplace operation"


# One optimizer per network, made by a comprehension, stepped in a loop over the names.
_OPTIMIZER_TABLE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "G, D = nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))\n"
    "nets = {{'D': D, 'G': G}}\n"
    "opts = {{name: torch.optim.SGD(nets[name].parameters(), lr=0.1) for name in ('D', 'G')}}\n"
    "fake = G(torch.randn(5, 4))\n"
    "losses = {{'D': D(fake.detach()).mean() - D(torch.randn(5, 4)).mean(), 'G': -D(fake).mean()}}\n"
    "for name in {order}:\n"
    "    opts[name].zero_grad()\n"
    "    losses[name].backward()\n"
    "    opts[name].step()\n"
)



# A hand-written exp as a custom autograd Function, saving `saved` for its backward
# (which computes the derivative from it as `use`); `scale` changes its output in place.
_EXP_FUNCTION = (
    "import torch\n"
    "class Exp(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        out = torch.exp(x)\n"
    "        ctx.save_for_backward({saved})\n"
    "        return out\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        (kept,) = ctx.saved_tensors\n"
    "        return grad * {use}\n"
    "scores = torch.randn(4, 5, requires_grad=True)\n"
    "attn = Exp.apply(scores)\n"
    "{scale}\n"
    "attn.sum().backward()\n"
)

# Embedding networks built by name from a registry; the L2 variant extends the plain one.
_NORMALISED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "EMBEDDERS = {{}}\n"
    "def register(name):\n"
    "    def add(cls):\n"
    "        EMBEDDERS[name] = cls\n"
    "        return cls\n"
    "    return add\n"
    "class EmbeddingNet(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(6, 4)\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n"
    "@register('l2')\n"
    "class L2EmbeddingNet(EmbeddingNet):\n"
    "    def forward(self, x):\n"
    "        emb = super().forward(x)\n"
    "        {normalise}\n"
    "        return emb\n"
    "model = EMBEDDERS['l2']()\n"
    "anchor, positive = model(torch.randn(8, 6)), model(torch.randn(8, 6))\n"
    "(anchor - positive).pow(2).sum(dim=1).mean().backward()\n"
)


# A contrastive model keeps a queue of keys in a buffer; `{keys}` is what `mm` saves,
# and the queue is refilled in a `@torch.no_grad()` helper before the backward.
_QUEUE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class Contrast(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.enc = nn.Linear(8, 8)\n"
    "        self.register_buffer('queue', torch.randn(32, 8))\n"
    "    @torch.no_grad()\n"
    "    def enqueue(self, keys):\n"
    "        self.queue[0:keys.size(0)] = keys\n"
    "    def forward(self, x):\n"
    "        q = self.enc(x)\n"
    "        l_neg = torch.mm(q, {keys})\n"
    "        self.enqueue(q.detach())\n"
    "        return l_neg\n"
    "model = Contrast()\n"
    "model(torch.randn(4, 8)).logsumexp(dim=1).mean().backward()\n"
)


class InplaceSavedTensor(Rule):
    code = "AG108"
    name = "inplace-saved-tensor"
    severity = "error"
    summary = {
        "en": "in-place change of a tensor that an op saved for its backward",
        "zh": "原地修改了某个运算为反向传播保存的张量",
    }
    explanation = {
        "en": (
            "Many ops keep a tensor for their backward: `sigmoid`, `tanh`, `exp`, `relu` keep "
            "their output; `pow`, `log`, `sin`, multiplication by a tensor and `matmul` keep their "
            "inputs. Changing that tensor in place afterwards (`y += 1`, `y.mul_(2)`, "
            "`nn.ReLU(inplace=True)` right after `nn.Sigmoid()`) makes the saved value wrong, and "
            f"the backward raises `RuntimeError: {RUNTIME}`. Use the out-of-place form (`y = y + 1`, "
            "`nn.ReLU()`). An in-place op on a value no op saved is fine (`y = x * 2; y.add_(1)`)."
        ),
        "zh": (
            "许多运算会为反向传播保存张量：`sigmoid`、`tanh`、`exp`、`relu` 保存输出；`pow`、`log`、`sin`、"
            "与张量相乘和 `matmul` 保存输入。之后原地修改该张量（`y += 1`、`y.mul_(2)`、紧跟在 `nn.Sigmoid()` "
            f"之后的 `nn.ReLU(inplace=True)`）会使保存的值失效，backward 时抛出 `RuntimeError: {RUNTIME}`。"
            "请改用非原地写法（`y = y + 1`、`nn.ReLU()`）。对没有被任何运算保存的值做原地运算没有问题"
            "（`y = x * 2; y.add_(1)`）。"
        ),
    }
    messages = {
        "en": {"inplace": f"`{{name}}` was saved for the backward of an earlier op; changing it in "
                          f"place makes the later backward raise RuntimeError: {RUNTIME}",
               "module": f"this in-place layer overwrites an output the layer before it saved for "
                         f"backward: a backward through the model raises RuntimeError: {RUNTIME}",
               "step": f"`{{name}}` changes in place parameters that the graph of `{{loss}}` saved "
                       f"before it: the backward of `{{loss}}` raises RuntimeError: {RUNTIME}; "
                       f"backward before the step, or recompute the forward after it"},
        "zh": {"inplace": f"`{{name}}` 已被之前的运算保存用于反向传播；原地修改它会使之后的 backward 抛出 "
                          f"RuntimeError: {RUNTIME}",
               "module": f"这个原地计算的层覆盖了前一层为反向传播保存的输出：经过该模型的 backward 会抛出 "
                         f"RuntimeError: {RUNTIME}",
               "step": f"`{{name}}` 原地修改了 `{{loss}}` 的计算图之前保存的参数：`{{loss}}` 的 backward "
                       f"会抛出 RuntimeError: {RUNTIME}；请在 step 之前 backward，或在 step 之后重新前向计算"},
    }

    bad = (
        # Attention weights zeroed in place after the softmax saved them, at each step
        # of a decoder whose length the analysis does not know.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "score = nn.Linear(5, 5)\n"
            "def attend(x, mask):\n"
            "    weights = torch.softmax(score(x), dim=-1)\n"
            "    weights.masked_fill_(mask, 0.0)\n"
            "    return weights\n"
            "def decode(x, mask, steps):\n"
            "    outs = []\n"
            "    for t in range(steps):\n"
            "        outs.append(attend(x, mask))\n"
            "    return torch.stack(outs, dim=1)\n"
            "x = torch.randn(4, 5)\n"
            "steps = int(torch.randint(1, 4, ()))\n"
            "decode(x, x > 0.5, steps).sum().backward()\n",
            Raises("RuntimeError", RUNTIME), line=6),
        # Part of a saved output changed through an index or a slice: a view shares its
        # base's version counter.
        Example(
            "import torch\n"
            "logits = torch.randn(6, requires_grad=True)\n"
            "labels = torch.tensor([1., 0., 0., 1., 0., 1.])\n"
            "p = (logits + 0.05).sigmoid()\n"
            "p[labels == 0] *= 0.5\n"
            "loss = -(labels * torch.log(p) + (1 - labels) * torch.log(1 - p)).mean()\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "w = torch.randn(4, requires_grad=True)\n"
            "s = (w + 1).sigmoid()\n"
            "s[:2].mul_(0.5)\n"
            "s.sum().backward()\n",
            Raises("RuntimeError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "x = torch.randn(4, requires_grad=True)\n"
            "y = x.exp()\n"
            "y += 1\n"
            "z = torch.log(y).sum()\n"
            "z.backward()\n",
            Raises("RuntimeError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "y = x.sigmoid()\n"
            "y.mul_(2)\n"
            "y.sum().backward()\n",
            Raises("RuntimeError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Sequential(nn.Linear(3, 5), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(5, 1))\n"
            "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "x = torch.randn(6, 3)\n"
            "optimizer.zero_grad()\n"
            "loss = net(x).pow(2).mean()\n"
            "loss.backward()\n"
            "optimizer.step()\n",
            Raises("RuntimeError", RUNTIME), line=3, column=52),
        Example(
            "import torch\n"
            "a = torch.randn(3, requires_grad=True)\n"
            "h = a * 1\n"
            "out = (h ** 2).sum()\n"
            "h.zero_()\n"
            "out.backward()\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
            "y = (w ** 2).sum()\n"
            "y.backward(retain_graph=True)\n"
            "opt.step()\n"
            "y.backward()\n",
            Raises("RuntimeError", RUNTIME), line=7),
        # D's step changes the weights `-D(fake)` saved before G's loss is backwarded.
        Example(_OPTIMIZER_TABLE.format(order="('D', 'G')"), Raises("RuntimeError", RUNTIME), line=10),
        # A hand-written RNN filling a preallocated buffer: each step's layer saved
        # the row it read, and writing the next row changes the buffer they share.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "hid2hid = nn.Linear(8, 8, bias=False)\n"
            "x = torch.randn(5, 4, 8)\n"
            "hiddens = torch.zeros(6, 4, 8)\n"
            "for t in range(5):\n"
            "    hiddens[t + 1] = torch.tanh(x[t] + hid2hid(hiddens[t]))\n"
            "hiddens[1:].pow(2).mean().backward()\n",
            Raises("RuntimeError", RUNTIME), line=7),
        # A custom Function that saves its output, normalised in place afterwards.
        Example(_EXP_FUNCTION.format(saved="out", use="kept", scale="attn /= attn.sum(dim=-1, keepdim=True)"),
                Raises("RuntimeError", RUNTIME), line=14),
        # A registered subclass normalises its base's embedding in place: the norm was
        # computed from it by `pow`, which saved it.
        Example(_NORMALISED.format(normalise="emb /= emb.pow(2).sum(dim=1, keepdim=True).sqrt()"),
                Raises("RuntimeError", RUNTIME), line=19),
        # In-place under no_grad still bumps the version autograd checks.
        Example(_QUEUE.format(keys="self.queue.t()"), Raises("RuntimeError", RUNTIME), line=10),
    )
    good = (
        Example(_NORMALISED.format(normalise="emb = emb / emb.pow(2).sum(dim=1, keepdim=True).sqrt()")),
        # A copy of the queue is saved, not the buffer the helper refills.
        Example(_QUEUE.format(keys="self.queue.clone().detach().t()")),
        # Which activation ran is not known here; only relu saves its output, which
        # the shift changes in place. With a leak, leaky_relu saved its input: fine.
        Example(
            "import os\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "leak = float(os.environ.get(\"LEAK\", \"0.1\"))\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "x = F.leaky_relu(w * 2, leak) if leak else F.relu(w * 2)\n"
            "x.sub_(0.4)\n"
            "x.sum().backward()\n"),
        # fast.ai's GeneralRelu with a leak handed on through **kwargs: leaky_relu
        # saves its input, not the output the in-place shift changes.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "\n"
            "class GeneralRelu(nn.Module):\n"
            "    def __init__(self, leak=None):\n"
            "        super().__init__()\n"
            "        self.leak = leak\n"
            "\n"
            "    def forward(self, x):\n"
            "        x = F.leaky_relu(x, self.leak) if self.leak is not None else F.relu(x)\n"
            "        x.sub_(0.4)\n"
            "        return x\n"
            "\n"
            "def fit(epochs, model, opt, train_dl):\n"
            "    for epoch in range(epochs):\n"
            "        for xb, yb in train_dl:\n"
            "            loss = F.cross_entropy(model(xb), yb)\n"
            "            loss.backward()\n"
            "            opt.step()\n"
            "            opt.zero_grad()\n"
            "\n"
            "def make(**kwargs):\n"
            "    return nn.Sequential(nn.Linear(4, 8), GeneralRelu(**kwargs), nn.Linear(8, 3))\n"
            "\n"
            "x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
            "train_dl = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 8, 4)]\n"
            "model = make(leak=0.1)\n"
            "fit(2, model, torch.optim.SGD(model.parameters(), lr=0.4), train_dl)\n"),
        Example(_OPTIMIZER_TABLE.format(order="('G', 'D')")),
        # No backward has given w a .grad yet: the step skips it and writes nothing.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
            "y = (w ** 2).sum()\n"
            "opt.step()\n"
            "y.backward()\n"),
        Example(
            "import torch\n"
            "x = torch.randn(4, requires_grad=True)\n"
            "y = x * 2\n"
            "y.add_(1)\n"
            "y = y.exp()\n"
            "y = y + 1\n"
            "torch.log(y).sum().backward()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Sequential(nn.Linear(3, 5), nn.ReLU(inplace=True), nn.Linear(5, 1))\n"
            "net(torch.randn(6, 3)).pow(2).mean().backward()\n"),
        Example(
            "import torch\n"
            "x = torch.randn(4, requires_grad=True)\n"
            "y = x.exp()\n"
            "y.sum().backward()\n"
            "with torch.no_grad():\n"
            "    y.mul_(2)\n"
            "y += 1\n"),
        # The same Function saving its input instead: the output is nobody's saved tensor.
        Example(_EXP_FUNCTION.format(saved="x", use="kept.exp()", scale="attn *= 0.5")),
        # `.data` has a version counter of its own: autograd does not see the change.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "y = (w * w).sum()\n"
            "w.data.mul_(2)\n"
            "y.backward()\n"),
        # The rows are collected and stacked, not written into one buffer.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "hid2hid = nn.Linear(8, 8, bias=False)\n"
            "x = torch.randn(5, 4, 8)\n"
            "hiddens = [torch.zeros(4, 8)]\n"
            "for t in range(5):\n"
            "    hiddens.append(torch.tanh(x[t] + hid2hid(hiddens[t])))\n"
            "torch.stack(hiddens[1:]).pow(2).mean().backward()\n"),
    )

    def check(self, trace, locale):
        changes = {}
        # Per in-place op, its runs in order: the one to name is the last before the
        # backward (a helper that resamples noise runs before the forward too).
        for event in trace.of(InplaceEvent):
            changes.setdefault(event.node, []).append(event)
        order = None
        steps = {e.node: e for e in trace.calls() if e.method == "step"}
        made_by = {e.result: e for e in trace.calls() if isinstance(e.result, ObjectRef)}
        for event in trace.calls():
            target = backward_target(event)
            if not isinstance(target, TensorFacts):
                continue
            # Report at the in-place op (which may sit in another function or chunk).
            clobbering = {event.clobbered[n] for n in target.saved_nodes
                          if n in event.clobbered and n not in event.freed}
            by_layer = []
            if clobbering and order is None:
                order = {id(e): index for index, e in enumerate(trace.events)}
            before = order.get(id(event), len(order)) if order is not None else 0
            for node in clobbering:
                runs = changes.get(node, ())
                change = next((c for c in reversed(runs) if order.get(id(c), 0) < before), runs[0]) if runs else None
                if change is not None and change.hidden:
                    # An in-place activation inside a container overwrote it: torch's code,
                    # not a line of the user's; the layer's definition is.
                    by_layer.append(change.layer)
                elif change is not None:
                    message = self.text("inplace", locale, name=source_of(_changed(change), change))
                    yield Report(node, message, (), change)
                    site = call_toward(change, event)
                    if site is not None:
                        # `model.reset_noise()` between the forward and the backward:
                        # the helper is right, calling it there is not.
                        yield said_at_call(site, message, locale)
                elif node in steps:
                    step = steps[node]
                    yield Report(event.node, self.text(
                        "step", locale, name=source_of(step.node.func, step),
                        loss=source_of(target_node(event), event)), (), event)
            made = [made_by.get(layer) for layer in by_layer if layer is not None]
            for at in {id(m): m for m in made if m is not None}.values():
                yield Report(at.node, self.text("module", locale), (), at)
            if by_layer and not any(made):
                yield Report(event.node, self.text("module", locale), (), event)


def _changed(event):
    """The tensor an in-place op changes: `y` in `y += 1`, `y.mul_(2)`, `y[0] = 1`,
    `y[mask] *= 0.5`, `y[:2].mul_(2)`, `x` in `relu_inplace(x)`."""
    node = event.node
    if isinstance(node, ast.AugAssign):
        changed = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_"):
        changed = node.func.value
    else:
        changed = event.target_node
    while isinstance(changed, ast.Subscript):
        changed = changed.value          # a part of it, through a view or an index
    return changed
