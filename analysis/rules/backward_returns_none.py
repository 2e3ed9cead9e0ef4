"""AG203 backward-returns-none: using the value of `.backward()`, which is always None."""
from __future__ import annotations

import libcst as cst

from analysis.events import CallEvent
from analysis.facts import TensorFacts, Unknown
from analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule, Silent
from analysis.rulekit import BACKWARD_KEYWORDS, code_of


class BackwardReturnsNone(Rule):
    code = "AG203"
    name = "backward-returns-none"
    severity = "warning"
    summary = {
        "en": "the value of .backward() is used; it is always None",
        "zh": "使用了 .backward() 的返回值，它永远是 None",
    }
    explanation = {
        "en": (
            "`y.backward()` accumulates gradients into the `.grad` of the leaves and returns "
            "None. `g = y.backward()` leaves `g` None, and the gradient is silently lost (or a "
            "later use fails far from the cause). Read the leaves' `.grad` after the call, or "
            "get the gradient as a value with `torch.autograd.grad(y, x)`."
        ),
        "zh": (
            "`y.backward()` 把梯度累加到叶子的 `.grad` 中，返回值是 None。`g = y.backward()` 使 `g` 为 "
            "None，梯度悄无声息地丢失（或在远处的后续使用中才报错）。请在调用后读取叶子的 `.grad`，"
            "或用 `torch.autograd.grad(y, x)` 直接得到梯度值。"
        ),
    }
    messages = {
        "en": {"message": "backward() returns None, so this value is always None; read "
                          "the leaves' .grad or use torch.autograd.grad",
               "fix": "Use torch.autograd.grad({target}, {leaf})[0]"},
        "zh": {"message": "backward() 返回 None，这里的值永远是 None；请读取叶子的 .grad 或使用 "
                          "torch.autograd.grad",
               "fix": "改用 torch.autograd.grad({target}, {leaf})[0]"},
    }

    bad = (
        Example(
            "import torch\n"
            "def squared_norm_grad(v):\n"
            "    v = v.clone().requires_grad_(True)\n"
            "    y = (v ** 2).sum()\n"
            "    dy_dv = y.backward()\n"
            "    return dy_dv\n"
            "result = squared_norm_grad(torch.tensor([1.0, 2.0, 3.0]))\n",
            Silent("result is None", "the gradient is None"), line=5),
        Example(
            "import torch\n"
            "def grad_check(x, func, eps=1e-3):\n"
            "    analytic_grad = func(x).backward()\n"
            "    x.grad.zero_()\n"
            "    numerical_grad = (func(x + eps) - func(x - eps)) / (2 * eps)\n"
            "    return torch.allclose(analytic_grad, numerical_grad, atol=1e-4)\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "grad_check(x, lambda t: t ** 2)\n",
            Raises("TypeError", "must be Tensor, not NoneType"), line=3, source="seed:000 3.2"),
    )
    good = (
        Example(
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = (x ** 2).sum()\n"
            "y.backward()\n"
            "g = x.grad\n"
            "(h,) = torch.autograd.grad((x ** 3).sum(), x)\n"),
        Example(
            "class Layer:\n"
            "    def backward(self, grad_output):\n"
            "        return grad_output * 2\n"
            "layer = Layer()\n"
            "grad_input = layer.backward(3.0)\n"),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "_ = (x * 3).sum().backward()\n"
            "class Hooks:\n"
            "    def backward(self, loss):\n"
            "        return loss.backward()\n"
            "Hooks().backward((x * 2).sum())\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(CallEvent):
            if event.method != "backward" or not event.used or not _torch_like(event) \
                    or _forwarded(event):
                continue
            fixes = ()
            if isinstance(event.receiver, TensorFacts) and len(event.leaf_names) == 1 \
                    and not event.node.args:
                torch = trace.torch_name or "torch"
                target = code_of(event.node.func.value)
                leaf = event.leaf_names[0]
                fixes = (FixSpec(self.text("fix", locale, target=target, leaf=leaf),
                                 (Edit("replace", event.node,
                                       f"{torch}.autograd.grad({target}, {leaf})[0]"),), safe=False),)
            yield Report(event.node, self.text("message", locale), fixes)


def _forwarded(event: CallEvent) -> bool:
    """`return loss.backward()` inside a method that is itself a `backward`: the
    wrapper returns None as well, on purpose."""
    function, stmt = event.ctx.function, event.ctx.stmt
    return function is not None and "backward" in function.name.value \
        and isinstance(stmt, cst.SimpleStatementLine) \
        and any(isinstance(s, cst.Return) and s.value is event.node for s in stmt.body)


def _torch_like(event: CallEvent) -> bool:
    """torch's `Tensor.backward`, as far as the code shows: a known tensor, or an
    unknown value called the way torch's backward is called (no positional
    argument, only torch's keywords). A `layer.backward(grad)` of a hand-written
    network is not torch's."""
    if isinstance(event.receiver, TensorFacts):
        return set(event.kwargs) <= BACKWARD_KEYWORDS
    return type(event.receiver) is Unknown and not event.args and set(event.kwargs) <= BACKWARD_KEYWORDS
