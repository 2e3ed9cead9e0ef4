"""AG106 no-grad-fn: backward on a value that does not require grad."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.call_sites import called_here
from autograd_lsp.analysis.rule import Example, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import backward_target, source_of, target_node
from autograd_lsp.analysis.trace import CallSite

RUNTIME = "element 0 of tensors does not require grad and does not have a grad_fn"


# A forward that returns `.data` for inputs of one legacy tensor type.
_LEGACY_TYPE_MODEL = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.embed = nn.Embedding(10, 4)\n"
    "        self.out = nn.Linear(4, 2)\n"
    "    def forward(self, ids):\n"
    "        as_tensor = isinstance(ids, torch.{type})\n"
    "        out = self.out(self.embed(ids).mean(1))\n"
    "        if as_tensor:\n"
    "            out = out.data\n"
    "        return out\n"
    "model = Net()\n"
    "ids, labels = torch.randint(0, 10, (3, 5)), torch.tensor([0, 1, 1])\n"
    "loss = nn.functional.cross_entropy(model(ids), labels)\n"
    "loss.backward()\n"
)


# A Gaussian policy scored on its own actions: differentiable only when they are
# drawn with `rsample()`.
_GAUSSIAN_POLICY = (
    "import torch\n"
    "import torch.nn as nn\n"
    "from torch.distributions import Normal\n"
    "policy = nn.Linear(4, 2)\n"
    "states = torch.randn(8, 4)\n"
    "dist = Normal(policy(states), 0.5)\n"
    "actions = dist.{draw}()\n"
    "reward = -(actions - 1.0).pow(2).sum(dim=1)\n"
    "loss = -reward.mean()\n"
    "loss.backward()\n"
)


# An encoder built through a registry that a function decorator fills; `{where}`
# is where the query is encoded.
_REGISTRY = (
    "import torch\n"
    "import torch.nn as nn\n"
    "ENCODERS = {{}}\n"
    "def register(name):\n"
    "    def deco(fn):\n"
    "        ENCODERS[name] = fn\n"
    "        return fn\n"
    "    return deco\n"
    "@register('mlp')\n"
    "def mlp(dim):\n"
    "    return nn.Sequential(nn.Linear(dim, 8), nn.ReLU(), nn.Linear(8, 4))\n"
    "encoder = ENCODERS['mlp'](3)\n"
    "{where}"
    "loss = q.pow(2).mean()\n"
    "loss.backward()\n"
)


# A block checkpointed between a frozen embedding and a frozen head.
_CHECKPOINTED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "from torch.utils.checkpoint import checkpoint\n"
    "torch.manual_seed(0)\n"
    "embed = nn.Embedding(10, 8).requires_grad_(False)\n"
    "block = nn.Sequential(nn.Linear(8, 8), nn.GELU())\n"
    "head = nn.Linear(8, 2).requires_grad_(False)\n"
    "h = checkpoint(block, embed(torch.randint(0, 10, (4,))), use_reentrant={reentrant})\n"
    "loss = head(h).sum()\n"
    "loss.backward()\n"
)


class NoGradFn(Rule):
    code = "AG106"
    name = "no-grad-fn"
    severity = "error"
    summary = {
        "en": "backward on a tensor that does not require grad",
        "zh": "对不需要梯度的张量调用 backward",
    }
    explanation = {
        "en": (
            "Only a tensor with a `grad_fn` (or a leaf with `requires_grad=True`) can start a "
            "backward pass. A value computed under `torch.no_grad()` or `torch.inference_mode()`, "
            "taken from `.detach()`, re-wrapped with `torch.tensor(...)` from `.item()` numbers, or "
            "computed only from tensors that never required grad has none, and "
            f"`backward()` raises `RuntimeError: {RUNTIME}`. Compute it with grad enabled from "
            "tensors that require grad (`torch.randn(3, requires_grad=True)`, model parameters), "
            "and keep it a tensor until the backward."
        ),
        "zh": (
            "只有带 `grad_fn` 的张量（或 `requires_grad=True` 的叶子）才能发起反向传播。"
            "在 `torch.no_grad()`/`torch.inference_mode()` 下计算的值、`.detach()` 得到的值、"
            "用 `torch.tensor(...)` 把 `.item()` 数字重新包装的值、或只由不需要梯度的张量算出的值都没有 "
            f"grad_fn，`backward()` 会抛出 `RuntimeError: {RUNTIME}`。请在开启梯度时、由需要梯度的张量"
            "（`torch.randn(3, requires_grad=True)`、模型参数）计算它，并在 backward 之前一直保持为张量。"
        ),
    }
    why = {
        "no_grad": {"en": "it was computed under torch.no_grad()", "zh": "它是在 torch.no_grad() 下计算的"},
        "inference_mode": {"en": "it was computed under torch.inference_mode()",
                           "zh": "它是在 torch.inference_mode() 下计算的"},
        "detach": {"en": "it comes from .detach()", "zh": "它来自 .detach()"},
        "data": {"en": "it comes from .data, which autograd does not see",
                 "zh": "它来自 .data，autograd 看不到它"},
        "rewrap": {"en": "torch.tensor(...) makes a new leaf with no history",
                   "zh": "torch.tensor(...) 创建的是没有历史的新叶子"},
        "never": {"en": "none of the tensors it is computed from requires grad",
                  "zh": "计算它的张量都不需要梯度"},
        "checkpoint": {"en": "it comes from checkpoint(..., use_reentrant=True), whose output requires grad "
                             "only when an input does, and none does: the parameters inside do not count",
                       "zh": "它来自 checkpoint(..., use_reentrant=True)：只有输入需要梯度时输出才需要梯度，"
                             "而这里没有输入需要梯度，内部的参数不算"},
        "sample": {"en": "it comes from a distribution's .sample(), which autograd does not go "
                         "through; .rsample() or .log_prob() does",
                   "zh": "它来自分布的 .sample()，autograd 不会穿过采样；.rsample() 或 .log_prob() 可以"},
    }
    messages = {
        "en": {"message": f"`{{name}}` does not require grad ({{why}}): backward raises "
                          f"RuntimeError: {RUNTIME}"},
        "zh": {"message": f"`{{name}}` 不需要梯度（{{why}}）：backward 会抛出 RuntimeError: {RUNTIME}"},
    }

    bad = (
        # Gradient checkpointing the reentrant way between a frozen embedding and a
        # frozen head: only the block's parameters are trainable, and they do not count.
        Example(_CHECKPOINTED.format(reentrant=True), Raises("RuntimeError", RUNTIME), line=10),
        Example(_REGISTRY.format(where="with torch.no_grad():\n    q = encoder(torch.randn(5, 3))\n"),
                Raises("RuntimeError", RUNTIME), line=16),
        # REINFORCE whose action probabilities went through NumPy to be sampled: the
        # log-probabilities kept are of the copies, and the discounted returns are
        # plain numbers built backwards.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))\n"
            "optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)\n"
            "rng = np.random.default_rng(0)\n"
            "log_probs, rewards = [], []\n"
            "for t in range(3):\n"
            "    probs = policy(torch.randn(4)).detach().numpy()\n"
            "    action = rng.choice(2, p=probs / probs.sum())\n"
            "    log_probs.append(torch.log(torch.from_numpy(probs)[action]))\n"
            "    rewards.append(1.0)\n"
            "R, returns = 0.0, []\n"
            "for r in reversed(rewards):\n"
            "    R = r + 0.99 * R\n"
            "    returns.insert(0, R)\n"
            "loss = torch.stack([-lp * G for lp, G in zip(log_probs, returns)]).sum()\n"
            "optimizer.zero_grad()\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=19),
        Example(_GAUSSIAN_POLICY.format(draw="sample"), Raises("RuntimeError", RUNTIME), line=10),
        # Old code returned `.data` when given a legacy tensor type: an int64 CPU
        # tensor is a `torch.LongTensor`.
        Example(_LEGACY_TYPE_MODEL.format(type="LongTensor"), Raises("RuntimeError", RUNTIME), line=17),
        Example(
            "import torch\n"
            "X = torch.randn(20, 3)\n"
            "y = X @ torch.tensor([0.5, -1.0, 2.0])\n"
            "w = torch.randn(3)\n"
            "b = torch.zeros(1)\n"
            "pred = X @ w + b\n"
            "loss = ((pred - y) ** 2).mean()\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=8),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(2, 1)\n"
            "batches = [(torch.randn(4, 2), torch.randn(4, 1)) for _ in range(3)]\n"
            "losses = [nn.functional.mse_loss(model(xb), yb).item() for xb, yb in batches]\n"
            "loss = torch.tensor(sum(losses) / len(losses))\n"
            "loss.backward()\n",
            Raises("RuntimeError", RUNTIME), line=7),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "with torch.no_grad():\n"
            "    y = (x * 2).sum()\n"
            "y.backward()\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "x = torch.ones(3, requires_grad=True)\n"
            "y = (x * 2).detach()\n"
            "y.sum().backward()\n",
            Raises("RuntimeError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Linear(3, 1)\n"
            "x = torch.randn(4, 3)\n"
            "with torch.no_grad():\n"
            "    out = net(x)\n"
            "out.mean().backward()\n",
            Raises("RuntimeError", RUNTIME), line=7),
        # Hard-triplet mining that goes through NumPy to select, and gives None when
        # no triplet is hard: past `if selected is None: continue`, the copies.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(8, 4)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "def select_hard(a, p, n):\n"
            "    hard = np.where(((a - n).norm(dim=1) - (a - p).norm(dim=1) < 1.0).numpy())\n"
            "    if len(hard[0]) == 0:\n"
            "        return None\n"
            "    return tuple(torch.from_numpy(t.detach().numpy()[hard]) for t in (a, p, n))\n"
            "for step in range(3):\n"
            "    a, p, n = model(torch.randn(6, 8)), model(torch.randn(6, 8)), model(torch.randn(6, 8))\n"
            "    selected = select_hard(a, p, n)\n"
            "    if selected is None:\n"
            "        continue\n"
            "    loss = F.triplet_margin_loss(*selected, margin=1.0)\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n",
            Raises("RuntimeError", RUNTIME), line=20),
    )
    good = (
        # The same without reentrant checkpointing: the block's parameters give the graph.
        Example(_CHECKPOINTED.format(reentrant=False)),
        Example(_REGISTRY.format(where="q = encoder(torch.randn(5, 3))\n")),
        Example(_GAUSSIAN_POLICY.format(draw="rsample")),
        # On the CPU, an int64 tensor is no `torch.cuda.LongTensor`: the graph is kept.
        Example(_LEGACY_TYPE_MODEL.format(type="cuda.LongTensor")),
        Example(
            "import torch\n"
            "X = torch.randn(20, 3)\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "loss = ((X @ w) ** 2).mean()\n"
            "loss.backward()\n"),
        Example(
            "import torch\n"
            "with torch.no_grad():\n"
            "    big_tensor = torch.randn(100, 100)\n"
            "print(big_tensor.requires_grad)\n",
            source="seed:000 3.3"),
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = torch.sin(x) * 2\n"
            "start = y.detach().clone().requires_grad_(True)\n"
            "parts = torch.stack([start.sum(), (start ** 2).sum()])\n"
            "parts.sum().backward()\n"),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "with torch.no_grad():\n"
            "    scale = x.sum()\n"
            "with torch.enable_grad():\n"
            "    y = (x * scale).sum()\n"
            "y.backward()\n"
            "t = torch.tensor(2.0, requires_grad=True)\n"
            "(t * 3).backward()\n"),
        Example(
            "import torch\n"
            "logits = torch.randn(4, 2, requires_grad=True)\n"
            "log_probs = torch.log_softmax(logits, dim=1)[:, 0]\n"
            "terms = []\n"
            "for lp, r in zip(log_probs, [1.0, 0.5, -0.2, 0.3]):\n"
            "    terms.append(-lp * r)\n"
            "total = torch.stack(terms).sum()\n"
            "total.backward()\n"),
        Example(
            "import torch\n"
            "def train(model, x):\n"
            "    with torch.no_grad():\n"
            "        target = model(x)\n"
            "    loss = (model(x) - target).pow(2).mean()\n"
            "    loss.backward()\n"),
    )

    def check(self, trace, locale):
        for event in trace.calls():
            target = backward_target(event)
            if target is None or target.requires_grad is not False:
                continue
            reason = target.no_grad_reason
            if reason not in self.why:
                continue      # grad_result belongs to higher-order-no-create-graph
            why = self.why[reason].get(locale) or self.why[reason]["en"]
            name = source_of(target_node(event), event)
            message = self.text("message", locale, name=name, why=why)
            yield Report(event.node, message, (), event)
            if reason in ("no_grad", "inference_mode"):
                site = _first_call_without_grad(event)
                if site is not None:
                    # The helper is right; the call that runs it with grad off is not.
                    yield Report(site.node, called_here(site.function.node.name, message, locale), (), site)


def _first_call_without_grad(event):
    """The outermost followed call, on the way to `event`, made with grad mode off
    (`heat_residual(...)` in a `@torch.no_grad()` validation): where the helper
    that backwards was entered without grad."""
    for site in event.ctx.calls:
        if isinstance(site, CallSite) and site.no_grad is True:
            return site if isinstance(getattr(site.function, "node", None), (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else None
    return None
