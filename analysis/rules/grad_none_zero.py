"""AG103 grad-none-zero: using `x.grad` while it is still None."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import GradAttr
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import receiver_text, sole_statement
from autograd_lsp.analysis.trace import InplaceEvent


RUNTIME = "'NoneType' object has no attribute '{attr}'"
AUGMENTED = "unsupported operand type(s) for {op}: 'NoneType' and 'Tensor'"


class GradNoneZero(Rule):
    code = "AG103"
    name = "grad-none-zero"
    severity = "error"
    summary = {
        "en": "x.grad used (e.g. x.grad.zero_()) while it is still None",
        "zh": "在 x.grad 仍为 None 时使用它（如 x.grad.zero_()）",
    }
    explanation = {
        "en": (
            "`x.grad` is None until a backward pass reaches `x`, and `optimizer.zero_grad()` sets "
            "it back to None (the default `set_to_none=True` since torch 2.0). Calling "
            "`x.grad.zero_()`, `x.grad.data.zero_()` or `x.grad.add_(...)` then raises "
            "`AttributeError: 'NoneType' object has no attribute 'zero_'` (`... 'data'` for "
            "`.data`). Guard it with `if x.grad is not None:`, or clear the gradient with "
            "`x.grad = None`."
        ),
        "zh": (
            "`x.grad` 在反向传播到达 `x` 之前都是 None，`optimizer.zero_grad()` 也会把它重新设为 None"
            "（torch 2.0 起默认 `set_to_none=True`）。此时调用 `x.grad.zero_()`、`x.grad.data.zero_()` 或 "
            "`x.grad.add_(...)` 会抛出 `AttributeError: 'NoneType' object has no attribute 'zero_'`"
            "（用 `.data` 时为 `... 'data'`）。请用 `if x.grad is not None:` 保护，或用 `x.grad = None` 清除梯度。"
        ),
    }
    messages = {
        "en": {"message": "`{name}` is still None here (no backward has reached `{owner}` since it "
                          "was made or cleared): this raises AttributeError: {runtime}",
               "augmented": "`{name}` is still None here (no backward has reached `{owner}` since it "
                            "was made or cleared): `{op}` raises TypeError: {runtime}",
               "not_required": "`{name}` is always None: `{owner}` does not require grad, so no "
                               "backward fills it: this raises AttributeError: {runtime}",
               "fix_guard": "Guard with `if {owner}.grad is not None:`",
               "fix_none": "Clear with `{owner}.grad = None`"},
        "zh": {"message": "`{name}` 此处仍为 None（自创建或清除以来还没有反向传播到达 `{owner}`）："
                          "会抛出 AttributeError: {runtime}",
               "augmented": "`{name}` 此处仍为 None（自创建或清除以来还没有反向传播到达 `{owner}`）："
                            "`{op}` 会抛出 TypeError: {runtime}",
               "not_required": "`{name}` 始终为 None：`{owner}` 不需要梯度，反向传播不会填充它："
                               "会抛出 AttributeError: {runtime}",
               "fix_guard": "用 `if {owner}.grad is not None:` 保护",
               "fix_none": "改为 `{owner}.grad = None` 清除"},
    }

    bad = (
        # The update rebinds `w` under no_grad: the new `w` does not require grad.
        Example(
            "import torch\n"
            "X = torch.tensor([1.0, 2.0, 3.0])\n"
            "Y = 2 * X\n"
            "w = torch.tensor(0.0, requires_grad=True)\n"
            "for epoch in range(3):\n"
            "    loss = ((w * X - Y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w = w - 0.01 * w.grad\n"
            "    w.grad.zero_()\n",
            Raises("AttributeError", RUNTIME.format(attr="zero_")), line=10),
        Example(
            "import torch\n"
            "def gradient_at(f, x0):\n"
            "    x = x0.clone().requires_grad_(True)\n"
            "    x.grad.zero_()\n"
            "    f(x).backward()\n"
            "    return x.grad\n"
            "print(gradient_at(lambda t: (t ** 2).sum(), torch.tensor([1.0, -2.0])))\n",
            Raises("AttributeError", RUNTIME.format(attr="zero_")), line=4),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "x.grad.data.zero_()\n",
            Raises("AttributeError", RUNTIME.format(attr="data")), line=3),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
            "(w * 2).sum().backward()\n"
            "opt.step()\n"
            "opt.zero_grad()\n"
            "w.grad.add_(1.0)\n",
            Raises("AttributeError", RUNTIME.format(attr="add_")), line=7),
        Example(
            # The article's advice, "zero the gradient before each backward", applied
            # to a fresh leaf: its .grad is still None on the first iteration.
            "import torch\n"
            "w = torch.tensor([1.0], requires_grad=True)\n"
            "for _ in range(3):\n"
            "    loss = w * 2\n"
            "    w.grad.zero_()\n"
            "    loss.backward()\n",
            Raises("AttributeError", RUNTIME.format(attr="zero_")), line=5, source="seed:000 2.3"),
    )
    good = (
        # A parameter added in place to an activation (a ViT's position embedding)
        # is in the graph: the backward fills its `.grad`.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "class Tiny(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.proj = nn.Linear(4, 4)\n"
            "        self.pos_embed = nn.Parameter(torch.zeros(1, 3, 4))\n"
            "    def forward(self, x):\n"
            "        x = self.proj(x)\n"
            "        x += self.pos_embed\n"
            "        return x.mean()\n"
            "model = Tiny()\n"
            "model(torch.randn(2, 3, 4)).backward()\n"
            "print(model.pos_embed.grad.norm().item())\n"),
        Example(
            "import torch\n"
            "w = torch.tensor([1.0], requires_grad=True)\n"
            "loss = w * 2\n"
            "loss.backward()\n"
            "w.grad.zero_()\n"
            "loss = w * 2\n"
            "loss.backward()\n",
            source="seed:000 2.3"),
        Example(
            "import torch\n"
            "x = torch.tensor(1.0, requires_grad=True)\n"
            "for _ in range(3):\n"
            "    y = x**2\n"
            "    y.backward()\n"
            "    print(x.grad)\n"
            "    x.grad.zero_()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 2)\n"
            "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
            "x, y = torch.randn(6, 3), torch.randn(6, 2)\n"
            "optimizer.zero_grad(set_to_none=True)\n"
            "loss = nn.functional.mse_loss(model(x), y)\n"
            "loss.backward()\n"
            "for p in model.parameters():\n"
            "    p.grad.mul_(0.5)\n"
            "optimizer.step()\n"),
        Example(
            "import torch\n"
            "x = torch.arange(4.0, requires_grad=True)\n"
            "y = 2 * torch.dot(x, x)\n"
            "y.backward()\n"
            "x.grad.zero_()\n"
            "z = torch.einsum('i,i->', x, x)\n"
            "z.backward()\n"
            "x.grad.zero_()\n"),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "if x.grad is not None:\n"
            "    x.grad.zero_()\n"
            "(x * x).sum().backward()\n"
            "x.grad.zero_()\n"),
    )

    def check(self, trace, locale):
        for event in trace.calls():
            receiver = event.receiver
            if not (isinstance(receiver, GradAttr) and receiver.owner.grad == "none"):
                continue
            grad_node = event.node.func.value           # `x.grad` or `x.grad.data`
            read = grad_node.value if receiver.via_data and isinstance(grad_node, ast.Attribute) else grad_node
            if not (isinstance(read, ast.Attribute) and read.attr == "grad"):
                continue      # a name bound to it (`g = x.grad.data`): the line that read it raised
            attr = "data" if receiver.via_data else event.method
            owner = receiver_text(grad_node.value if receiver.via_data else grad_node, event)
            kind = "not_required" if receiver.owner.requires_grad is False else "message"
            message = self.text(kind, locale, name=f"{owner}.grad", owner=owner,
                                runtime=RUNTIME.format(attr=attr))
            fixes = ()
            stmt = sole_statement(event)
            if stmt is not None:
                fixes = (FixSpec(self.text("fix_guard", locale, owner=owner),
                                 (Edit("wrap", stmt, f"if {owner}.grad is not None:", event),)),)
                if event.method == "zero_":
                    fixes += (FixSpec(self.text("fix_none", locale, owner=owner),
                                      (Edit("replace", event.node, f"{owner}.grad = None", event),)),)
            yield Report(event.node, message, fixes, event)
        for event in trace.of(InplaceEvent):
            target = event.target
            if not (isinstance(target, GradAttr) and target.owner.grad == "none"
                    and isinstance(event.node, ast.AugAssign)):
                continue
            grad_node = event.target_node
            owner = receiver_text(grad_node.value if target.via_data else grad_node, event)
            op = event.op
            yield Report(event.node, self.text(
                "augmented", locale, name=f"{owner}.grad", owner=owner, op=op,
                runtime=AUGMENTED.format(op=op)), (), event)
