"""AG111 requires-grad-nonleaf: changing `requires_grad` of a non-leaf tensor."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import NumberValue, TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import source_of
from autograd_lsp.analysis.trace import AttrAssignEvent


RUNTIME = "you can only change requires_grad flags of leaf variables."


class RequiresGradNonleaf(Rule):
    code = "AG111"
    name = "requires-grad-nonleaf"
    severity = "error"
    summary = {
        "en": "setting requires_grad on a non-leaf tensor",
        "zh": "对非叶子张量设置 requires_grad",
    }
    explanation = {
        "en": (
            "Whether a computed tensor requires grad follows from its inputs; only leaves have "
            "a flag of their own. `t.requires_grad = False` (or `= True`) and "
            f"`t.requires_grad_(False)` on a computed tensor raise `RuntimeError: {RUNTIME}` "
            "To stop gradients flowing through a value, use `t = t.detach()`. "
            "(`requires_grad_()` with True on a non-leaf raises nothing: it already requires grad.)"
        ),
        "zh": (
            "计算得到的张量是否需要梯度由其输入决定；只有叶子才有自己的标志。对计算得到的张量执行 "
            "`t.requires_grad = False`（或 `= True`）以及 `t.requires_grad_(False)` 会抛出 "
            f"`RuntimeError: {RUNTIME}` 要阻断梯度流经某个值，请用 `t = t.detach()`。"
            "（对非叶子调用 `requires_grad_()` 设为 True 不会报错：它本来就需要梯度。）"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` is computed from tensors that require grad (not a leaf): "
                          f"changing its requires_grad raises RuntimeError: {RUNTIME}",
               "fix": "Cut it from the graph: {name} = {name}.detach()"},
        "zh": {"message": f"`{{name}}` 由需要梯度的张量计算得到（不是叶子）：修改它的 requires_grad 会抛出 "
                          f"RuntimeError: {RUNTIME}",
               "fix": "把它从计算图中切断：{name} = {name}.detach()"},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "policy_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)\n"
            "target_net.load_state_dict(policy_net.state_dict())\n"
            "states, next_states = torch.randn(8, 4), torch.randn(8, 4)\n"
            "rewards = torch.randn(8)\n"
            "next_values = target_net(next_states).max(1)[0]\n"
            "next_values.requires_grad = False\n"
            "expected = rewards + 0.99 * next_values\n",
            Raises("RuntimeError", RUNTIME), line=8),
        Example(
            "import torch\n"
            "x = torch.ones(3, requires_grad=True)\n"
            "y = x * 2\n"
            "y.requires_grad_(False)\n",
            Raises("RuntimeError", RUNTIME), line=4),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())\n"
            "head = nn.Linear(8, 2)\n"
            "for p in backbone.parameters():\n"
            "    p.requires_grad = False\n"
            "optimizer = torch.optim.SGD(head.parameters(), lr=0.1)\n"
            "x, y = torch.randn(4, 6), torch.tensor([0, 1, 1, 0])\n"
            "optimizer.zero_grad()\n"
            "loss = nn.functional.cross_entropy(head(backbone(x)), y)\n"
            "loss.backward()\n"
            "optimizer.step()\n"),
        Example(
            "import torch\n"
            "x = torch.ones(3, requires_grad=True)\n"
            "y = (x * 2).requires_grad_()\n"
            "z = (x * 3).detach()\n"
            "z.requires_grad = True\n"
            "w = torch.zeros(2)\n"
            "w.requires_grad_(True)\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(AttrAssignEvent):
            if event.attr == "requires_grad" and _computed(event.receiver):
                name = source_of(event.node.value, event)
                yield Report(event.node, self.text("message", locale, name=name),
                             self._fixes(event, event.node.value, name, locale), event)
        for event in trace.calls():
            if event.method == "requires_grad_" and _computed(event.receiver):
                flag = event.args[0] if event.args else event.kwargs.get("requires_grad")
                if isinstance(flag, NumberValue) and flag.value is False:
                    name = source_of(event.node.func.value, event)
                    yield Report(event.node, self.text("message", locale, name=name),
                                 self._fixes(event, event.node.func.value, name, locale), event)

    def _fixes(self, event, target, name: str, locale: str) -> tuple:
        # Only for a plain name, as a statement of its own.
        stmt = event.ctx.stmt
        if not isinstance(target, ast.Name) or not isinstance(stmt, (ast.Assign, ast.Expr)):
            return ()
        return (FixSpec(self.text("fix", locale, name=name),
                        (Edit("replace", stmt, f"{name} = {name}.detach()", event),)),)


def _computed(value) -> bool:
    return isinstance(value, TensorFacts) and value.is_leaf is False and value.requires_grad is True
