"""AG105 inplace-leaf: an in-place op on a leaf that requires grad, with grad mode on."""
from __future__ import annotations

import ast

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import source_of
from autograd_lsp.analysis.trace import InplaceEvent


RUNTIME = "a leaf Variable that requires grad is being used in an in-place operation."
RUNTIME_VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation."


# `net.apply(partial(init, value=0.5))`: `apply` calls the partial on every submodule.
_PARTIAL_INIT = (
    "import functools\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "{decorator}def init_constant(module, value):\n"
    "    if isinstance(module, nn.Linear):\n"
    "        module.weight.fill_(value)\n"
    "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
    "net.apply(functools.partial(init_constant, value=0.5))\n"
)


class InplaceLeaf(Rule):
    code = "AG105"
    name = "inplace-leaf"
    severity = "error"
    summary = {
        "en": "in-place change of a leaf tensor that requires grad, outside torch.no_grad()",
        "zh": "在 torch.no_grad() 之外原地修改需要梯度的叶子张量",
    }
    explanation = {
        "en": (
            "A leaf that requires grad (made with `requires_grad=True`, or a parameter) is what "
            "autograd differentiates with respect to; changing it in place while grad mode is on "
            "(`w += 1`, `w.add_(1)`, `w.zero_()`, `w[0] = 1`, `w.copy_(v)`) would make its own "
            f"history inconsistent, so torch raises `RuntimeError: {RUNTIME}` (`{RUNTIME_VIEW}` "
            "for index assignment). Initialise or update it under `with torch.no_grad():`, or "
            "build the value first and create the leaf from it."
        ),
        "zh": (
            "需要梯度的叶子（用 `requires_grad=True` 创建的张量或模型参数）是求导的对象；在开启梯度时原地修改它"
            "（`w += 1`、`w.add_(1)`、`w.zero_()`、`w[0] = 1`、`w.copy_(v)`）会破坏其历史，torch 会抛出 "
            f"`RuntimeError: {RUNTIME}`（索引赋值时为 `{RUNTIME_VIEW}`）。请在 `with torch.no_grad():` "
            "中初始化或更新它，或先算好数值再由它创建叶子。"
        ),
    }
    messages = {
        "en": {"message": "`{name}` is a leaf that requires grad; changing it in place ({op}) "
                          "with grad enabled raises RuntimeError: {runtime}",
               "fix": "Wrap in `with torch.no_grad():`"},
        "zh": {"message": "`{name}` 是需要梯度的叶子；在开启梯度时原地修改它（{op}）会抛出 "
                          "RuntimeError: {runtime}",
               "fix": "包进 `with torch.no_grad():`"},
    }

    bad = (
        # An init function given its value with functools.partial, run by `apply`.
        Example(_PARTIAL_INIT.format(decorator=""), Raises("RuntimeError", RUNTIME), line=6),
        Example(
            "import torch\n"
            "x = torch.randn(8, 4)\n"
            "W = torch.randn(4, 2, requires_grad=True)\n"
            "bias = torch.zeros(2, requires_grad=True)\n"
            "bias += 0.1  # start slightly positive\n"
            "out = torch.relu(x @ W + bias)\n"
            "out.mean().backward()\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "mix = torch.zeros(2, 2, requires_grad=True)\n"
            "mix[0, 0] = 1.0\n",
            Raises("RuntimeError", RUNTIME_VIEW), line=3),
        Example(
            "import torch\n"
            "w = torch.ones(3, requires_grad=True)\n"
            "w.mul_(0.5)\n",
            Raises("RuntimeError", RUNTIME), line=3),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "p = nn.Parameter(torch.empty(3))\n"
            "p.copy_(torch.arange(3.0))\n",
            Raises("RuntimeError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "model = nn.Linear(3, 1)\n"
            "model(torch.randn(4, 3)).pow(2).mean().backward()\n"
            "for p in model.parameters():\n"
            "    p -= 0.1 * p.grad\n",
            Raises("RuntimeError", RUNTIME), line=6),
        # Detection heads given prior biases, one per stride (read from a tensor).
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "heads = nn.ModuleList(nn.Conv2d(c, 6, 1) for c in (4, 8))\n"
            "strides = torch.tensor([8.0, 16.0])\n"
            "for head, s in zip(heads, strides):\n"
            "    b = head.bias.view(2, -1)\n"
            "    b[:, 0] += 1.0 / s\n",
            Raises("RuntimeError", RUNTIME_VIEW), line=7),
    )
    good = (
        Example(_PARTIAL_INIT.format(decorator="@torch.no_grad()\n")),
        Example(
            "import torch\n"
            "w = torch.tensor(5.0, requires_grad=True)\n"
            "for step in range(10):\n"
            "    loss = (w - 3) ** 2\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n"
            "    w.data.clamp_(0.0, 10.0)\n"
            "    w.grad.zero_()\n"
            "print(w.item())\n"),
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = x * 2\n"
            "y.add_(1)\n"
            "y.sum().backward()\n"
            "z = torch.zeros(3)\n"
            "z += 1\n"
            "z[0] = 5.0\n"),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "model = nn.Linear(3, 1)\n"
            "model(torch.randn(4, 3)).pow(2).mean().backward()\n"
            "with torch.no_grad():\n"
            "    for p in model.parameters():\n"
            "        p -= 0.1 * p.grad\n"
            "for p in model.parameters():\n"
            "    p.data.mul_(0.9)\n"
            "    p.grad.zero_()\n"
            "    nn.init.zeros_(p)\n"),
        Example(
            "import torch\n"
            "w = torch.zeros(3, requires_grad=True)\n"
            "with torch.no_grad():\n"
            "    w.fill_(0.5)\n"
            "    w[0] = 1.0\n"
            "w.requires_grad_(False)\n"
            "w += 1\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(InplaceEvent):
            t = event.target
            if not isinstance(t, TensorFacts) or event.ctx.no_grad is not False \
                    or event.op in api.INPLACE_ALLOWED_ON_LEAF:
                continue
            leaf = t.is_leaf is True and t.requires_grad is True
            if not leaf and not t.view_of_leaf:
                continue
            runtime = RUNTIME_VIEW if event.op == "setitem" or not leaf else RUNTIME
            op = event.op if event.op in ("setitem",) or event.op.endswith("=") or "(" in event.op \
                else f".{event.op}()"
            message = self.text("message", locale, name=source_of(event.target_node, event),
                                op=op if op != "setitem" else "x[i] = v", runtime=runtime)
            fixes = ()
            stmt = event.ctx.stmt
            if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)):
                torch = trace.torch_name or "torch"
                fixes = (FixSpec(self.text("fix", locale),
                                 (Edit("wrap", stmt, f"with {torch}.no_grad():", event),)),)
            yield Report(event.node, message, fixes, event)
