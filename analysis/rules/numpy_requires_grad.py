"""AG107 numpy-requires-grad: `.numpy()` on a tensor that requires grad."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import after_receiver, receiver_text, source_of
from autograd_lsp.analysis.semantics.external import NdArray

RUNTIME = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


class NumpyRequiresGrad(Rule):
    code = "AG107"
    name = "numpy-requires-grad"
    severity = "error"
    summary = {
        "en": ".numpy() on a tensor that requires grad",
        "zh": "对需要梯度的张量调用 .numpy()",
    }
    explanation = {
        "en": (
            "A NumPy array cannot carry autograd history, so torch refuses to share memory with "
            f"a tensor that requires grad: `RuntimeError: {RUNTIME}` Take the value out of the "
            "graph first: `t.detach().numpy()` (`t.detach().cpu().numpy()` for a GPU tensor). "
            "Inside `torch.no_grad()` or `torch.inference_mode()` new results do not require grad, "
            "and `t.numpy(force=True)` detaches by itself."
        ),
        "zh": (
            "NumPy 数组无法携带自动求导历史，因此 torch 拒绝与需要梯度的张量共享内存："
            f"`RuntimeError: {RUNTIME}` 请先把值从计算图中取出：`t.detach().numpy()`（GPU 张量用 "
            "`t.detach().cpu().numpy()`）。在 `torch.no_grad()` 或 `torch.inference_mode()` 中得到的新结果不需要梯度，"
            "`t.numpy(force=True)` 也会自行 detach。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` requires grad: .numpy() raises RuntimeError: {RUNTIME}",
               "fix": "Detach first: {name}.detach().numpy()"},
        "zh": {"message": f"`{{name}}` 需要梯度：.numpy() 会抛出 RuntimeError: {RUNTIME}",
               "fix": "先 detach：{name}.detach().numpy()"},
    }

    bad = (
        Example(
            "import numpy as np\n"
            "import torch\n"
            "x = torch.linspace(-1, 1, 5, requires_grad=True)\n"
            "y = torch.tanh(2 * x)\n"
            "y.sum().backward()\n"
            "table = np.column_stack([x.detach().numpy(), y.numpy(), x.grad.numpy()])\n",
            Raises("RuntimeError", RUNTIME), line=6),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "print(w.numpy())\n",
            Raises("RuntimeError", RUNTIME), line=3),
    )
    good = (
        Example(
            "import torch\n"
            "x = torch.linspace(-1, 1, 5, requires_grad=True)\n"
            "y = torch.tanh(2 * x)\n"
            "with torch.no_grad():\n"
            "    z = torch.tanh(3 * x)\n"
            "a = y.detach().numpy(), z.numpy(), y.numpy(force=True)\n"
            "y.sum().backward()\n"
            "b = x.grad.numpy()\n"),
    )

    def check(self, trace, locale):
        for event in trace.calls():
            if event.method == "numpy" and event.qualname is None:
                t = event.receiver
                if not isinstance(t, TensorFacts) or t.requires_grad is not True \
                        or event.ctx.no_grad is not False or event.arg_node("force") is not None:
                    continue
                name = receiver_text(event.node.func, event)
                fix = FixSpec(self.text("fix", locale, name=name),
                              (after_receiver(event.node.func, ".detach()", event),))
                yield Report(event.node, self.text("message", locale, name=name), (fix,), event)
            elif isinstance(event.result, NdArray) and event.result.converted is not None \
                    and event.ctx.no_grad is False:
                node = event.arg_node(None, 0)
                name = source_of(node, event) if node is not None else "…"
                yield Report(event.node, self.text("message", locale, name=name), (), event)
