"""AG205 detached-rewrap: `torch.tensor(t)` of a tensor that is part of a graph."""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Warns
from autograd_lsp.analysis.rulekit import source_of

WARNING = "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"
WARNING_LIST = "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior"


class DetachedRewrap(Rule):
    code = "AG205"
    name = "detached-rewrap"
    severity = "warning"
    summary = {
        "en": "torch.tensor(t) of a tensor in a graph: the copy has no history",
        "zh": "对计算图中的张量调用 torch.tensor(t)：副本没有历史",
    }
    explanation = {
        "en": (
            "`torch.tensor(...)` always copies its data into a new leaf with no history. Given a "
            "tensor that is part of a graph (`torch.tensor(t)`, or `torch.tensor([a, b])` of "
            "scalars that require grad), the gradient no longer flows back to what `t` was "
            f"computed from, and torch warns `UserWarning: {WARNING}` (for lists: "
            f"`{WARNING_LIST}`). To keep the graph, use `t` itself (`t.to(dtype)` to convert), "
            "`torch.stack([a, b])` for a list; to cut it on purpose, say so with "
            "`t.detach().clone()`."
        ),
        "zh": (
            "`torch.tensor(...)` 总是把数据复制成一个没有历史的新叶子。传入计算图中的张量（`torch.tensor(t)`，"
            "或由需要梯度的标量组成的 `torch.tensor([a, b])`）后，梯度不再流回 `t` 的来源，torch 会警告 "
            f"`UserWarning: {WARNING}`（列表时为 `{WARNING_LIST}`）。要保留计算图，请直接用 `t`"
            "（转换类型用 `t.to(dtype)`），列表用 `torch.stack([a, b])`；若有意切断，请明确写 `t.detach().clone()`。"
        ),
    }
    messages = {
        "en": {"tensor": f"`{{name}}` is part of a graph; torch.tensor() copies it into a leaf "
                         f"without history, so no gradient reaches what it came from. torch warns: "
                         f"{WARNING}",
               "list": f"torch.tensor() of scalars that require grad copies their values: no "
                       f"gradient flows back. torch warns: {WARNING_LIST}",
               "fix_stack": "Keep the graph: {torch}.stack({items})"},
        "zh": {"tensor": f"`{{name}}` 属于计算图；torch.tensor() 会把它复制为没有历史的叶子，梯度无法流回其来源。"
                         f"torch 会警告：{WARNING}",
               "list": f"对需要梯度的标量调用 torch.tensor() 只复制了数值：梯度无法回流。torch 会警告：{WARNING_LIST}",
               "fix_stack": "保留计算图：{torch}.stack({items})"},
    }

    bad = (
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = x * 2\n"
            "z = torch.tensor(y, dtype=torch.float32)\n",
            Warns("UserWarning", WARNING), line=4),
        Example(
            "import torch\n"
            "w = torch.randn(2, requires_grad=True)\n"
            "a, b = (w ** 2).sum(), w.sum()\n"
            "both = torch.tensor([a, b])\n",
            Warns("UserWarning", WARNING_LIST), line=4),
        Example(
            "import torch\n"
            "def as_unit(vec):\n"
            "    vec = torch.tensor(vec, dtype=torch.float32)  # lists welcome too\n"
            "    return vec / vec.norm()\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "direction = as_unit(w * 3)\n",
            Warns("UserWarning", WARNING), line=3),
    )
    good = (
        Example(
            "import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "y = torch.sin(x) * 2\n"
            "start = y.detach().clone().requires_grad_(True)\n"
            "parts = torch.stack([start.sum(), (start ** 2).sum()])\n"
            "parts.sum().backward()\n"
            "plain = torch.tensor([1.0, 2.0])\n"
            "copy = plain.clone()\n"
            "kept = torch.as_tensor(y)\n"),
        Example(
            "import torch\n"
            "def as_unit(vec):\n"
            "    vec = torch.tensor(vec, dtype=torch.float32)\n"
            "    return vec / vec.norm()\n"
            "direction = as_unit([1.0, 2.0, 2.0])\n"),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        for event in trace.calls():
            if event.qualname not in _CUTTING or not event.args:
                continue
            data, arg = event.args[0], event.arg_node(None, 0)
            if isinstance(data, TensorFacts):
                if data.requires_grad is True and event.qualname in api.DATA_FACTORIES_CUTTING_GRAPH:
                    yield Report(event.node, self.text("tensor", locale, name=source_of(arg, event)),
                                 (), event)
                continue
            items = event.extra.get("data_tensors", ())
            if items and all(v.is_scalar() for v in items) and any(v.requires_grad is True for v in items):
                text = source_of(arg, event)
                fixes = ()
                if len(event.node.args) == 1 and event.qualname in api.DATA_FACTORIES_CUTTING_GRAPH:
                    fixes = (FixSpec(self.text("fix_stack", locale, torch=torch, items=text),
                                     (Edit("replace", event.node, f"{torch}.stack({text})", event),)),)
                yield Report(event.node, self.text("list", locale), fixes, event)


# torch.tensor copies; the legacy constructors read a list's tensors as numbers.
_CUTTING = frozenset(api.DATA_FACTORIES_CUTTING_GRAPH) | {
    "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.cuda.FloatTensor"}
