"""AG109 higher-order-no-create-graph: differentiating a gradient that was
computed without `create_graph=True`."""
from __future__ import annotations

from autograd_lsp.analysis.facts import GradAttr
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import backward_target, keyword_node, source_of, target_node, with_keyword

RUNTIME = "element 0 of tensors does not require grad and does not have a grad_fn"

# A score network's sliced score matching loss over a batch of inputs.
_SCORE_MATCHING = (
    "import torch\n"
    "from torch import nn\n"
    "net = nn.Sequential(nn.Linear(2, 8), nn.Softplus(), nn.Linear(8, 2))\n"
    "x = torch.randn(16, 2).requires_grad_()\n"
    "v = torch.randn_like(x)\n"
    "score = net(x)\n"
    "grad_sv = torch.autograd.grad((score * v).sum(), x, {keyword}=True)[0]\n"
    "norm_term = 0.5 * (score * v).sum(dim=-1).pow(2)\n"
    "trace_term = (v * grad_sv).sum(dim=-1)\n"
    "loss = (norm_term + trace_term).mean()\n"
    "loss.backward()\n"
)


class HigherOrderNoCreateGraph(Rule):
    code = "AG109"
    name = "higher-order-no-create-graph"
    severity = "error"
    summary = {
        "en": "second derivative of a gradient computed without create_graph=True",
        "zh": "对未使用 create_graph=True 求得的梯度再求导",
    }
    explanation = {
        "en": (
            "A gradient from `torch.autograd.grad(y, x)` or `y.backward()` is a plain tensor "
            "with no history unless the first pass was told to record one with "
            "`create_graph=True`. Differentiating it again (`g.backward()`, "
            f"`torch.autograd.grad(g, x)`) raises `RuntimeError: {RUNTIME}`. Pass "
            "`create_graph=True` to the first `torch.autograd.grad` call."
        ),
        "zh": (
            "`torch.autograd.grad(y, x)` 或 `y.backward()` 得到的梯度是没有历史的普通张量，"
            "除非第一次求导时用 `create_graph=True` 记录计算图。再次对它求导（`g.backward()`、"
            f"`torch.autograd.grad(g, x)`）会抛出 `RuntimeError: {RUNTIME}`。请给第一次 "
            "`torch.autograd.grad` 调用传入 `create_graph=True`。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` comes from a gradient computed without create_graph=True, so it "
                          f"has no graph: differentiating it raises RuntimeError: {RUNTIME}",
               "dead": "this gradient is taken without create_graph=True, so what is computed from "
                       "it has no graph: added to `{loss}`, it changes the loss's value but gives no "
                       "gradient, and the term trains nothing",
               "source": f"this gradient is taken without create_graph=True: `{{name}}`, computed from it, "
                         f"is differentiated later, which raises RuntimeError: {RUNTIME}",
               "fix": "Record the first derivative's graph: create_graph=True"},
        "zh": {"message": f"`{{name}}` 来自未使用 create_graph=True 求得的梯度，没有计算图："
                          f"再次求导会抛出 RuntimeError: {RUNTIME}",
               "dead": "这个梯度求得时没有 create_graph=True，由它算出的量没有计算图：加到 `{loss}` 上，"
                       "只改变损失的数值而不产生梯度，这一项什么也训练不了",
               "source": f"这个梯度求得时没有 create_graph=True：由它算出的 `{{name}}` 之后被求导，"
                         f"会抛出 RuntimeError: {RUNTIME}",
               "fix": "记录一阶导数的计算图：create_graph=True"},
    }

    bad = (
        # Denoising score matching: the score is the energy's gradient, taken by a
        # helper without create_graph; the loss built from it cannot be backwarded.
        # Said where the fix goes, the helper's autograd.grad (and where it raises).
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Linear(2, 8), nn.Softplus(), nn.Linear(8, 1))\n"
            "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
            "def energy_gradient(x):\n"
            "    x = x.requires_grad_(True)\n"
            "    (grad,) = torch.autograd.grad(model(x).sum(), x)\n"
            "    return grad\n"
            "for step in range(2):\n"
            "    x = torch.randn(16, 2)\n"
            "    noise = 0.3 * torch.randn_like(x)\n"
            "    score = -energy_gradient(x + noise)\n"
            "    loss = ((score + noise / 0.09) ** 2).sum(1).mean()\n"
            "    opt.zero_grad()\n"
            "    loss.backward()\n"
            "    opt.step()\n",
            Raises("RuntimeError", RUNTIME), line=7),
        # TRPO's Fisher-vector product: the KL's gradients flattened into one vector
        # by parameters_to_vector, then differentiated again.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.nn.utils import parameters_to_vector\n"
            "torch.manual_seed(0)\n"
            "policy = nn.Linear(4, 3)\n"
            "states = torch.randn(8, 4)\n"
            "logp = policy(states).log_softmax(-1)\n"
            "kl = (logp.exp() * logp).sum(-1).mean()\n"
            "flat = parameters_to_vector(torch.autograd.grad(kl, policy.parameters()))\n"
            "v = torch.randn(flat.shape[0])\n"
            "hvp = torch.autograd.grad((flat * v).sum(), policy.parameters())\n",
            Raises("RuntimeError", RUNTIME), line=11),
        # A Hessian-vector product over the gradients a plain backward left in .grad.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "loss = model(torch.randn(4, 3)).pow(2).mean()\n"
            "loss.backward()\n"
            "params = list(model.parameters())\n"
            "grads = [p.grad for p in params]\n"
            "v = [torch.randn_like(p) for p in params]\n"
            "hv = torch.autograd.grad(grads, params, grad_outputs=v)\n",
            Raises("RuntimeError", RUNTIME), line=9),
        Example(
            "import torch\n"
            "x = torch.tensor(3.0, requires_grad=True)\n"
            "y = x ** 3\n"
            "dy_dx = torch.autograd.grad(y, x)[0]\n"
            "print('first derivative:', dy_dx)\n"
            "dy_dx.backward()\n",
            Raises("RuntimeError", RUNTIME), line=6),
        Example(
            "import torch\n"
            "from torch.autograd import grad\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "(g,) = grad(x ** 3, x)\n"
            "(h,) = grad(g, x)\n",
            Raises("RuntimeError", RUNTIME), line=5),
        Example(
            "import torch\n"
            "x = torch.tensor(3.0, requires_grad=True)\n"
            "(x ** 3).backward()\n"
            "x.grad.backward()\n",
            Raises("RuntimeError", RUNTIME), line=4),
        # Sliced score matching: the input gradient's term, per sample, added to the
        # other term has no graph and trains nothing.
        Example(_SCORE_MATCHING.format(keyword="retain_graph"),
                Silent("trace_term.grad_fn is None and trace_term.abs().sum() > 0",
                       "the trace term adds to the loss and gives no gradient"), line=7),
    )
    good = (
        Example(
            "import torch\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "y = x**3\n"
            "first_derivative = torch.autograd.grad(y, x, create_graph=True)[0]\n"
            "print(first_derivative)\n"
            "second_derivative = torch.autograd.grad(first_derivative, x)[0]\n"
            "print(second_derivative)\n",
            source="seed:002 4.2"),
        Example(
            "import torch\n"
            "x = torch.tensor(3.0, requires_grad=True)\n"
            "g = torch.autograd.grad(x ** 3, x)[0]\n"
            "penalty = (g * x).sum()\n"
            "penalty.backward()\n"),
        Example(_SCORE_MATCHING.format(keyword="create_graph")),
        # First-order meta-learning: the step on the weights is meant to have no graph
        # through the gradient.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "x = torch.randn(5, 3)\n"
            "g = torch.autograd.grad((x @ w).pow(2).mean(), w)[0]\n"
            "fast = w - 0.1 * g\n"
            "(x @ fast).pow(2).mean().backward()\n"),
    )

    def check(self, trace, locale):
        calls = trace.calls()
        by_node = {e.node: e for e in calls}
        for index, event in enumerate(calls):
            target = backward_target(event)
            if target is not None and target.requires_grad is True and target.ungraded:
                for node in target.ungraded:
                    grad = by_node.get(node)
                    if grad is None:
                        continue
                    fix = FixSpec(self.text("fix", locale),
                                  (Edit("replace", node, with_keyword(node, "create_graph", "True", grad), grad),))
                    yield Report(node, self.text("dead", locale, loss=source_of(target_node(event), event)),
                                 (fix,), grad)
            target = backward_target(event)
            if target is not None and target.requires_grad is False \
                    and target.no_grad_reason == "grad_result":
                yield from self._reports(calls[:index], event, locale)
            elif event.method == "backward" and isinstance(event.receiver, GradAttr) \
                    and event.receiver.owner.grad in ("set", "summed") and not event.node.args:
                yield Report(event.node, self.text(
                    "message", locale, name=source_of(event.node.func.value, event)), (), event)
            elif _grad_without_graph(event):
                # `torch.autograd.grad([p.grad for p in params], params, v)` after a
                # backward without create_graph (a Hessian-vector product).
                yield Report(event.node, self.text(
                    "message", locale, name=source_of(target_node(event), event)), (), event)

    def _reports(self, earlier, event, locale: str):
        """At the differentiation that raises and, when it is known, at the gradient
        taken without create_graph=True (where the fix goes)."""
        name = source_of(target_node(event), event)
        fixes = ()
        source = _grad_call(earlier, event)
        if source is not None:
            fixes = (FixSpec(self.text("fix", locale),
                             (Edit("replace", source.node,
                                   with_keyword(source.node, "create_graph", "True", source), source),)),)
        yield Report(event.node, self.text("message", locale, name=name), fixes, event)
        if source is not None:
            yield Report(source.node, self.text("source", locale, name=name), fixes, source)


def _grad_without_graph(event) -> bool:
    """`torch.autograd.grad` / `torch.autograd.backward` of a `.grad` (or of a
    sequence whose first item is one) that a backward without create_graph filled."""
    if event.qualname not in ("torch.autograd.grad", "torch.autograd.backward"):
        return False
    outputs = event.args[0] if event.args else event.kwargs.get(
        "outputs" if event.qualname.endswith("grad") else "tensors")
    if not isinstance(outputs, GradAttr):
        outputs = event.extra.get("first_output")
    return isinstance(outputs, GradAttr) and outputs.owner.grad in ("set", "summed")


def _grad_call(earlier, event):
    """The autograd.grad call that produced the differentiated value: the last one
    without create_graph before it, in the same function run or in a helper that run
    called (`score = energy_gradient(model, x)`), on the same pass of its loops."""
    depth = len(event.ctx.calls)
    for other in reversed(earlier):
        if other.qualname != "torch.autograd.grad" or keyword_node(other, "create_graph") is not None:
            continue
        if other.ctx.calls[:depth] != event.ctx.calls or other.ctx.passes[:len(event.ctx.passes)] != event.ctx.passes:
            continue
        if len(other.ctx.calls) == depth and other.ctx.function is not event.ctx.function:
            continue
        return other
    return None
