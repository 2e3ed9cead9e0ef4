"""AG101 nonscalar-backward: `backward()` without `gradient` on a tensor that
is not a scalar (or `torch.autograd.grad` of one without `grad_outputs`)."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import (after_receiver, code_of, is_tensor_backward, keyword_node, shape_text,
                                          source_of, torch_name)

RUNTIME = "grad can be implicitly created only for scalar outputs"


# A per-pixel loss map over a strided convolution's output.
_PIXEL_LOSS = (
    "import torch\n"
    "import torch.nn as nn\n"
    "conv = nn.Conv2d(1, 4, 3, stride=2, padding=1)\n"
    "x = torch.randn(2, 1, 8, 8)\n"
    "target = torch.rand(2, 4, 4, 4)\n"
    "logits = conv(x)\n"
    "focal = (1 - torch.sigmoid(logits)) ** 2 * (logits - target) ** 2\n"
    "loss = {loss}\n"
    "loss.backward()\n"
)


# A segmentation loss set up with functools.partial.
_PARTIAL_CRITERION = (
    "import functools\n"
    "import torch\n"
    "import torch.nn.functional as F\n"
    "head = torch.nn.Conv2d(3, 1, 1)\n"
    "criterion = functools.partial(F.binary_cross_entropy_with_logits,\n"
    "                              pos_weight=torch.tensor([3.0]), reduction='{reduction}')\n"
    "img, mask = torch.randn(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.7).float()\n"
    "loss = criterion(head(img), mask)\n"
    "loss.backward()\n"
)

# A model computing its loss in forward (per sample), wrapped in DataParallel.
_WRAPPED_LOSS = (
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
    "class WithLoss(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(20, 5)\n"
    "    def forward(self, x, y):\n"
    "        return F.cross_entropy(self.fc(x), y, reduction='none')\n"
    "model = nn.DataParallel(WithLoss())\n"
    "x, y = torch.randn(8, 20), torch.randint(0, 5, (8,))\n"
    "loss = model(x, y)\n"
    "{loss}.backward()\n"
)


# InfoNCE over two views of a batch, returning (loss, accuracy).
_INFO_NCE = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "def info_nce(z1, z2, temperature=0.2):\n"
    "    logits = F.normalize(z1, dim=1) @ F.normalize(z2, dim=1).t() / temperature\n"
    "    per_anchor = -logits.log_softmax(dim=1).diagonal()\n"
    "    accuracy = (logits.argmax(dim=1) == torch.arange(len(z1))).float().mean()\n"
    "    return {loss}, accuracy\n"
    "encoder = torch.nn.Linear(6, 4)\n"
    "opt = torch.optim.Adam(encoder.parameters())\n"
    "x = torch.randn(8, 6)\n"
    "loss, acc = info_nce(encoder(x + 0.1 * torch.randn_like(x)), encoder(x))\n"
    "opt.zero_grad()\n"
    "loss.backward()\n"
    "opt.step()\n"
)


# Quantile regression: the pinball loss of three predicted quantiles.
_PINBALL = (
    "import torch\n"
    "def pinball_loss(pred, target, quantiles):\n"
    "    q = torch.tensor(quantiles)\n"
    "    err = target.unsqueeze(-1) - pred\n"
    "    return torch.maximum(q * err, (q - 1) * err).{reduce}\n"
    "model = torch.nn.Linear(7, 3)\n"
    "x, y = torch.randn(32, 7), torch.randn(32)\n"
    "loss = pinball_loss(model(x), y, (0.1, 0.5, 0.9))\n"
    "model.zero_grad()\n"
    "loss.backward()\n"
)


# Linear regression from scratch as d2l teaches it: a generator shuffles the indices
# and yields batches; the first has the full batch size. `{loss}` is backwarded.
_FROM_SCRATCH = (
    "import random\n"
    "import torch\n"
    "def data_iter(batch_size, features, labels):\n"
    "    indices = list(range(len(features)))\n"
    "    random.shuffle(indices)\n"
    "    for i in range(0, len(features), batch_size):\n"
    "        batch = torch.tensor(indices[i:i + batch_size])\n"
    "        yield features[batch], labels[batch]\n"
    "features = torch.normal(0, 1, (100, 2))\n"
    "labels = features @ torch.tensor([[2.0], [-3.4]]) + 4.2\n"
    "w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)\n"
    "b = torch.zeros(1, requires_grad=True)\n"
    "for epoch in range(2):\n"
    "    for X, y in data_iter(10, features, labels):\n"
    "        l = (X @ w + b - y) ** 2 / 2\n"
    "        {loss}.backward()\n"
    "        with torch.no_grad():\n"
    "            for param in (w, b):\n"
    "                param -= 0.03 * param.grad / 10\n"
    "                param.grad.zero_()\n"
)


class NonscalarBackward(Rule):
    code = "AG101"
    name = "nonscalar-backward"
    severity = "error"
    summary = {
        "en": "backward() on a tensor with more than one element, without a gradient",
        "zh": "对多元素张量调用 backward() 而未传入 gradient",
    }
    explanation = {
        "en": (
            "`y.backward()` can only seed the gradient by itself when `y` holds exactly one "
            "element: it starts from dy/dy = 1. For a vector or matrix torch raises "
            f"`RuntimeError: {RUNTIME}`. Reduce the output to a scalar first (`y.sum()`, "
            "`y.mean()`), or pass the vector in the vector-Jacobian product explicitly: "
            "`y.backward(torch.ones_like(y))`. The same holds for `torch.autograd.grad(y, x)` "
            "without `grad_outputs`."
        ),
        "zh": (
            "`y.backward()` 只有在 `y` 恰好含一个元素时才能自行设定初始梯度（dy/dy = 1）。"
            f"对向量或矩阵，torch 会抛出 `RuntimeError: {RUNTIME}`。先把输出归约为标量"
            "（`y.sum()`、`y.mean()`），或显式传入向量-雅可比积的权重：`y.backward(torch.ones_like(y))`。"
            "`torch.autograd.grad(y, x)` 不给 `grad_outputs` 时同理。"
        ),
    }
    messages = {
        "en": {"backward": f"`{{name}}` has shape {{shape}}, not a scalar: backward() raises "
                           f"RuntimeError: {RUNTIME}",
               "grad": f"`{{name}}` has shape {{shape}}, not a scalar: autograd.grad without "
                       f"grad_outputs raises RuntimeError: {RUNTIME}",
               "fix_sum": "Reduce with .sum() before backward",
               "fix_mean": "Reduce with .mean() before backward",
               "fix_ones": "Pass gradient=torch.ones_like({name})",
               "fix_grad_outputs": "Pass grad_outputs=torch.ones_like({name})"},
        "zh": {"backward": f"`{{name}}` 的形状是 {{shape}}，不是标量：backward() 会抛出 "
                           f"RuntimeError: {RUNTIME}",
               "grad": f"`{{name}}` 的形状是 {{shape}}，不是标量：不带 grad_outputs 的 autograd.grad 会抛出 "
                       f"RuntimeError: {RUNTIME}",
               "fix_sum": "先用 .sum() 归约再 backward",
               "fix_mean": "先用 .mean() 归约再 backward",
               "fix_ones": "传入 gradient=torch.ones_like({name})",
               "fix_grad_outputs": "传入 grad_outputs=torch.ones_like({name})"},
    }

    bad = (
        # Prioritised replay: a batch drawn by index from priorities appended as
        # transitions come, each TD error weighted by the mean weight (`*` binds
        # before the reduction the author meant for the product).
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "q = nn.Linear(4, 2)\n"
            "memory, prios = [], []\n"
            "for t in range(40):\n"
            "    memory.append(torch.randn(4))\n"
            "    prios.append(max(prios, default=1.0))\n"
            "probs = torch.tensor(prios) / sum(prios)\n"
            "idx = torch.multinomial(probs, 8, replacement=True)\n"
            "weights = (len(memory) * probs[idx]) ** -0.4\n"
            "states = torch.stack([memory[i] for i in idx.tolist()])\n"
            "td_error = 1.0 - q(states).max(1, keepdim=True)[0]\n"
            "loss = td_error.pow(2) * weights.mean()\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=15),
        # Mixup with one lambda per sample, drawn for the batch a loader hands out and
        # paired by a permutation of it: the per-sample losses are never reduced.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "model = nn.Linear(4, 3)\n"
            "ce = nn.CrossEntropyLoss(reduction='none')\n"
            "beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))\n"
            "data = TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))\n"
            "for x, y in DataLoader(data, batch_size=8):\n"
            "    lam = beta.sample((x.size(0),))\n"
            "    index = torch.randperm(x.size(0))\n"
            "    logits = model(lam.view(-1, 1) * x + (1 - lam.view(-1, 1)) * x[index])\n"
            "    loss = lam * ce(logits, y) + (1 - lam) * ce(logits, y[index])\n"
            "    loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=13),
        # One loss per expert, over the rows of the experts' stacked logits: a vector
        # of three losses.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "experts = nn.ModuleList([nn.Linear(4, 3) for _ in range(3)])\n"
            "h, target = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
            "logits = torch.stack([e(h) for e in experts])\n"
            "per_expert = []\n"
            "for expert_logits in logits:\n"
            "    per_expert.append(F.cross_entropy(expert_logits, target))\n"
            "loss = torch.stack(per_expert)\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=11),
        # A detector's box loss, unreduced, over the anchors a mask picks (as many as
        # the mask holds True: whatever their count, not one number), summed with the
        # class loss; the box targets come from a helper of unknown shape.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "head = nn.Linear(8, 6 * 4)\n"
            "def encode(boxes):\n"
            "    return boxes.log1p()\n"
            "deltas = head(torch.randn(2, 8)).view(-1, 6, 4)\n"
            "fg = torch.tensor([[1, 0, 1, 0, 0, 1], [0, 1, 1, 0, 0, 0]]) > 0\n"
            "targets = encode(torch.rand(2, 6, 4))\n"
            "loss_box = nn.SmoothL1Loss(reduction='none')(deltas[fg], targets[fg])\n"
            "loss = F.mse_loss(deltas, torch.zeros(2, 6, 4)) + loss_box\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=12),
        # A per-sample loss over a transformer encoder's pooled output.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "torch.manual_seed(0)\n"
            "layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, batch_first=True)\n"
            "encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)\n"
            "head = nn.Linear(8, 3)\n"
            "logits = head(encoder(torch.randn(4, 5, 8)).mean(dim=1))\n"
            "loss = F.cross_entropy(logits, torch.tensor([0, 1, 2, 0]), reduction='none')\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=10),
        # A per-pixel loss map: the convolution's output size follows from its
        # kernel, stride and padding, and an elementwise term keeps it.
        Example(_PIXEL_LOSS.format(loss="focal"), Raises("RuntimeError", RUNTIME), line=9),
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = x * 2\n"
            "y.backward()\n",
            Raises("RuntimeError", RUNTIME), line=4, source="seed:000 2.1"),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = x * 2\n"
            "try:\n"
            "    y.backward()\n"
            "except RuntimeError as e:\n"
            "    print(e)\n"
            "    raise\n",
            # The article prints the error and goes on; re-raised here so that the
            # proof sees it.
            Raises("RuntimeError", RUNTIME), line=5, source="seed:002 3.1"),
        Example(
            "import torch as T\n"
            "x = T.tensor([1.0, 2.0, 3.0, 4.0])\n"
            "y = T.tensor([2.1, 3.9, 6.2, 7.8])\n"
            "w = T.tensor(1.0, requires_grad=True)\n"
            "b = T.tensor(0.0, requires_grad=True)\n"
            "for step in range(10):\n"
            "    pred = w * x + b\n"
            "    loss = (pred - y) ** 2\n"
            "    loss.backward()\n"
            "    with T.no_grad():\n"
            "        w -= 0.01 * w.grad\n"
            "        w.grad.zero_()\n"
            "        b.grad = None\n",
            Raises("RuntimeError", RUNTIME), line=9),
        Example(
            "import torch\n"
            "from torch.autograd import grad\n"
            "x = torch.ones(2, 2, requires_grad=True)\n"
            "y = (x + 2) ** 2\n"
            "dy_dx = grad(outputs=y, inputs=x)\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "W = torch.randn(2, 3, requires_grad=True)\n"
            "v = torch.tensor([1.0, 0.0, -1.0])\n"
            "out = torch.matmul(W, v)\n"
            "out.backward()\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "def apply_gradients(out):\n"
            "    out.backward()\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "apply_gradients(x * 2)\n",
            Raises("RuntimeError", RUNTIME), line=3),
        # REINFORCE without the sum: the log-probabilities of sampled actions,
        # picked by an index read from `multinomial`, stacked into one per step.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))\n"
            "def run_episode(steps=5):\n"
            "    log_probs = []\n"
            "    for _ in range(steps):\n"
            "        probs = policy(torch.randn(4))\n"
            "        action = probs.multinomial(1).item()\n"
            "        log_probs.append(torch.log(probs[action]))\n"
            "    return log_probs\n"
            "log_probs = run_episode()\n"
            "loss = -torch.stack(log_probs) * torch.ones(5)\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=13),
        # A contrastive loss over two views of each batch, left per sample.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "encoder = nn.Linear(16, 8)\n"
            "loader = DataLoader(TensorDataset(torch.randn(32, 16)), batch_size=8)\n"
            "for (x,) in loader:\n"
            "    z = F.normalize(torch.cat([encoder(x), encoder(x + 0.1)]), dim=1)\n"
            "    n = x.size(0)\n"
            "    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])\n"
            "    loss = F.cross_entropy(z @ z.t() / 0.5, targets, reduction='none')\n"
            "    loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=12),
        # The criterion configured once with functools.partial, kept per pixel.
        Example(_PARTIAL_CRITERION.format(reduction="none"), Raises("RuntimeError", RUNTIME), line=9),
        # A model that returns its own per-sample loss, wrapped in DataParallel.
        Example(_WRAPPED_LOSS.format(loss="loss"), Raises("RuntimeError", RUNTIME), line=13),
        # A contrastive helper returns the per-anchor terms (the diagonal of the
        # log-probabilities), with its accuracy, and the caller backwards them.
        Example(_INFO_NCE.format(loss="per_anchor"), Raises("RuntimeError", RUNTIME), line=13),
        # A quantile (pinball) loss averaged over the batch only: one loss per quantile.
        Example(_PINBALL.format(reduce="mean(dim=0)"), Raises("RuntimeError", RUNTIME), line=10),
        Example(_FROM_SCRATCH.format(loss="l"), Raises("RuntimeError", RUNTIME), line=16),
    )
    good = (
        Example(_PIXEL_LOSS.format(loss="focal.mean()")),
        Example(_PARTIAL_CRITERION.format(reduction="mean")),
        Example(_WRAPPED_LOSS.format(loss="loss.mean()")),
        Example(_INFO_NCE.format(loss="per_anchor.mean()")),
        Example(_PINBALL.format(reduce="mean()")),
        Example(_FROM_SCRATCH.format(loss="l.sum()")),
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = x * 2\n"
            "y.sum().backward()\n"
            "z = x * 3\n"
            "weights = torch.ones_like(z)\n"
            "z.backward(weights)\n",
            source="seed:000 2.1"),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = x * 2\n"
            "grad_tensors = torch.tensor([1.0, 1.0])\n"
            "y.backward(grad_tensors)\n"
            "print(x.grad)\n",
            source="seed:002 3.3"),
        Example(
            "import torch\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "y = x**2 + 3*x + 1\n"
            "y.backward()\n"
            "print(x.grad)\n",
            source="seed:002 2"),
        Example(
            "import torch\n"
            "def custom_loss(predictions, targets):\n"
            "    weights = torch.arange(1, len(predictions)+1, dtype=torch.float32)\n"
            "    return (predictions - targets)**2 * weights\n"
            "predictions = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)\n"
            "targets = torch.tensor([1.0, 1.0, 1.0])\n"
            "loss = custom_loss(predictions, targets)\n"
            "loss.backward(torch.ones_like(loss))\n"
            "print(predictions.grad)\n",
            source="seed:002 4.1"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "criterion = nn.MSELoss()\n"
            "x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
            "loss = criterion(model(x), y)\n"
            "loss.backward()\n"
            "x1 = torch.ones(1, requires_grad=True)\n"
            "(x1 * 2).backward()\n"),
        Example(
            "import torch\n"
            "def step(model, batch):\n"
            "    loss = model(batch)\n"
            "    loss.backward()\n"
            "def apply_gradients(out):\n"
            "    out.backward()\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "apply_gradients((x * 2).sum())\n"),
        Example(
            "import torch\n"
            "W = torch.randn(2, 3, requires_grad=True)\n"
            "v = torch.tensor([1.0, 0.0, -1.0])\n"
            "out = W @ v\n"
            "out.backward(gradient=torch.ones_like(out))\n"
            "g = torch.autograd.grad((W @ v).sum(), W)\n"
            "h = torch.autograd.grad(W @ v, W, grad_outputs=torch.ones(2))\n"),
    )

    def check(self, trace, locale):
        for event in trace.differentiations():
            if is_tensor_backward(event):
                target = event.receiver
                if not event.node.args and keyword_node(event, "gradient") is None and _nonscalar(target):
                    yield self._report(event, target, "backward", locale, torch_name(trace))
            elif event.qualname == "torch.autograd.grad":
                outputs = event.args[0] if event.args else event.kwargs.get("outputs")
                has_seed = len(event.args) > 2 or "grad_outputs" in event.kwargs
                if not has_seed and _nonscalar(outputs):
                    yield self._report(event, outputs, "grad", locale, torch_name(trace))

    def _report(self, event, target: TensorFacts, kind: str, locale: str, torch: str) -> Report:
        if kind == "backward":
            name = source_of(event.node.func.value, event)
            # Both reductions remove the error; the mean keeps the gradient's scale
            # independent of the batch size, as losses usually are, so only it is
            # applied by fix-all.
            fixes = (
                FixSpec(self.text("fix_mean", locale), (after_receiver(event.node.func, ".mean()", event),)),
                FixSpec(self.text("fix_sum", locale), (after_receiver(event.node.func, ".sum()", event),),
                        safe=False),
                FixSpec(self.text("fix_ones", locale, name=name),
                        (Edit("replace", event.node,
                              f"{source_of(event.node.func, event)}({torch}.ones_like({name}))", event),),
                        safe=False),
            )
        else:
            outputs = event.arg_node("outputs", 0)
            name = code_of(outputs) if outputs is not None else "outputs"
            fixes = ()
        message = self.text(kind, locale, name=name, shape=shape_text(target.shape))
        return Report(event.node, message, fixes, event)


def _nonscalar(value) -> bool:
    return isinstance(value, TensorFacts) and value.requires_grad is not False \
        and value.numel_is_not_one()
