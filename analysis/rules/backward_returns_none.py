"""AG203 backward-returns-none: using the value of `.backward()`, which is always None."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.call_sites import called_here
from autograd_lsp.analysis.facts import TensorFacts, Unknown
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import BACKWARD_KEYWORDS, source_of
from autograd_lsp.analysis.trace import CallSite, is_backward



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
               "fix": "Use torch.autograd.grad({target}, {leaf})[0]",
               "forwarded": "`{name}` returns what backward() returns, None, and a caller keeps it "
                            "as a value"},
        "zh": {"message": "backward() 返回 None，这里的值永远是 None；请读取叶子的 .grad 或使用 "
                          "torch.autograd.grad",
               "fix": "改用 torch.autograd.grad({target}, {leaf})[0]",
               "forwarded": "`{name}` 返回 backward() 的返回值 None，而调用方把它当作一个值保存"},
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
        # A model's `backward` method forwards the tensor's backward, and its caller
        # keeps the None as the step's loss.
        Example(
            "import torch\n"
            "class Model:\n"
            "    def __init__(self):\n"
            "        self.w = torch.ones(2, requires_grad=True)\n"
            "    def backward(self, x):\n"
            "        self.loss = (self.w * x).sum()\n"
            "        return self.loss.backward()\n"
            "    def optimize(self, x):\n"
            "        loss = self.backward(x)\n"
            "        return {\"loss\": loss}\n"
            "metrics = Model().optimize(torch.ones(2))\n",
            Silent("metrics['loss'] is None", "the logged loss is None"), line=9),
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
        for event in trace.calls():
            if not is_backward(event) or event.method != "backward" or not event.used \
                    or not _torch_like(event):
                continue
            if _forwarded(event):
                # A `backward` method returning the tensor's backward: None on purpose,
                # unless the caller keeps it (`loss = self.backward()`).
                site = event.ctx.calls[-1] if event.ctx.calls else None
                if isinstance(site, CallSite) and _kept(site):
                    name = event.ctx.function.node.name
                    yield Report(site.node, called_here(name, self.text("message", locale), locale), (), site)
                    # Said at the return too: dropping it from the helper is one fix.
                    yield Report(event.node, self.text("forwarded", locale, name=name), (), event)
                continue
            if not isinstance(event.receiver, TensorFacts) and trace.torch_name is None:
                continue      # a module that does not import torch: another library's backward
            fixes = ()
            leaves = _leaf_names(trace, event)
            if isinstance(event.receiver, TensorFacts) and len(leaves) == 1 and not event.node.args:
                torch = trace.torch_name or "torch"
                target = source_of(event.node.func.value, event)
                fixes = (FixSpec(self.text("fix", locale, target=target, leaf=leaves[0]),
                                 (Edit("replace", event.node,
                                       f"{torch}.autograd.grad({target}, {leaves[0]})[0]", event),),
                                 safe=False),)
            yield Report(event.node, self.text("message", locale), fixes, event)


def _leaf_names(trace, event) -> list:
    """Names bound to the leaves of the backward's graph where it runs."""
    return list(event.extra.get("leaf_names", ()))


def _forwarded(event) -> bool:
    """`return loss.backward()` inside a function that is itself a `backward`: the
    wrapper returns None as well, on purpose."""
    function, stmt = event.ctx.function, event.ctx.stmt
    return function is not None and "backward" in getattr(function.node, "name", "") \
        and isinstance(stmt, ast.Return) and stmt.value is event.node


def _kept(site) -> bool:
    """Whether the value of a call is stored or used, not dropped or passed on."""
    stmt = site.stmt
    if isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is site.node:
        return False
    return stmt is not None


def _torch_like(event) -> bool:
    """torch's `Tensor.backward`, as far as the code shows: a known tensor, or an
    unknown value called the way torch's backward is called (no positional
    argument, only torch's keywords). A `layer.backward(grad)` of a hand-written
    network is not torch's."""
    keywords = {k.arg for k in event.node.keywords}
    if isinstance(event.receiver, TensorFacts):
        return keywords <= BACKWARD_KEYWORDS
    return isinstance(event.receiver, Unknown) and not event.node.args and keywords <= BACKWARD_KEYWORDS
