"""AG110 gradient-shape-mismatch: a backward seed whose shape differs from the output's."""
from __future__ import annotations

from autograd_lsp.analysis.facts import Sym, TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import is_tensor_backward, shape_text, source_of, torch_size

RUNTIME = "Mismatch in shape: grad_output[0] has a shape of {seed} and output[0] has a shape of {out}"


class GradientShapeMismatch(Rule):
    code = "AG110"
    name = "gradient-shape-mismatch"
    severity = "error"
    summary = {
        "en": "backward(gradient) or grad_outputs whose shape differs from the output's",
        "zh": "backward(gradient) 或 grad_outputs 的形状与输出不一致",
    }
    explanation = {
        "en": (
            "The `gradient` of `y.backward(gradient)` (and each `grad_outputs` item of "
            "`torch.autograd.grad`) is dL/dy: it must have exactly the shape of `y`, without "
            "broadcasting. Otherwise torch raises `RuntimeError: Mismatch in shape: grad_output[0] "
            "has a shape of ... and output[0] has a shape of ...`. Build it from the output: "
            "`torch.ones_like(y)`."
        ),
        "zh": (
            "`y.backward(gradient)` 的 `gradient`（以及 `torch.autograd.grad` 的每个 `grad_outputs`）就是 dL/dy："
            "它的形状必须与 `y` 完全相同，不做广播。否则 torch 抛出 `RuntimeError: Mismatch in shape: "
            "grad_output[0] has a shape of ... and output[0] has a shape of ...`。请由输出构造它："
            "`torch.ones_like(y)`。"
        ),
    }
    messages = {
        "en": {"message": "the gradient has shape {seed_shape} but `{name}` has shape {out_shape}: "
                          "backward raises RuntimeError: {runtime}",
               "fix": "Use a gradient shaped like the output: {torch}.ones_like({name})"},
        "zh": {"message": "gradient 的形状是 {seed_shape}，而 `{name}` 的形状是 {out_shape}：backward 会抛出 "
                          "RuntimeError: {runtime}",
               "fix": "使用与输出同形状的 gradient：{torch}.ones_like({name})"},
    }

    bad = (
        Example(
            "import torch\n"
            "W = torch.randn(2, 3, requires_grad=True)\n"
            "v = torch.tensor([1.0, 0.0, -1.0])\n"
            "out = W @ v\n"
            "seed = torch.ones(3)\n"
            "out.backward(seed)\n",
            Raises("RuntimeError", RUNTIME.format(seed="torch.Size([3])", out="torch.Size([2])")),
            line=6),
        Example(
            "import torch\n"
            "x = torch.ones(2, 3, requires_grad=True)\n"
            "y = x * 2\n"
            "g = torch.autograd.grad(y, x, grad_outputs=torch.ones(3))\n",
            Raises("RuntimeError", RUNTIME.format(seed="torch.Size([3])", out="torch.Size([2, 3])")),
            line=4),
    )
    good = (
        Example(
            "import torch\n"
            "W = torch.randn(2, 3, requires_grad=True)\n"
            "v = torch.tensor([1.0, 0.0, -1.0])\n"
            "out = W @ v\n"
            "out.backward(gradient=torch.ones_like(out))\n"
            "y = W * 2\n"
            "y.backward(torch.ones(2, 3))\n"),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        for event in trace.differentiations():
            if is_tensor_backward(event):
                out = event.receiver
                seed = event.args[0] if event.args else event.kwargs.get("gradient")
                seed_node = event.arg_node("gradient", 0)
                name_node = event.node.func.value
            elif event.qualname == "torch.autograd.grad":
                out = event.args[0] if event.args else event.kwargs.get("outputs")
                seed = event.args[2] if len(event.args) > 2 else event.kwargs.get("grad_outputs")
                seed_node = event.arg_node("grad_outputs", 2)
                name_node = event.arg_node("outputs", 0)
            elif event.qualname == "torch.autograd.backward" and event.extra.get("seeds"):
                pairs = [(o, g) for o, g in event.extra["seeds"]
                         if isinstance(o, TensorFacts) and isinstance(g, TensorFacts) and _differ(o.shape, g.shape)]
                if pairs:
                    out, seed = pairs[0]
                    runtime = RUNTIME.format(seed=torch_size(seed.shape), out=torch_size(out.shape))
                    name = source_of(event.arg_node("tensors", 0), event)
                    yield Report(event.node, self.text(
                        "message", locale, name=name, runtime=runtime, seed_shape=shape_text(seed.shape),
                        out_shape=shape_text(out.shape)), (), event)
                continue
            else:
                continue
            if not (isinstance(out, TensorFacts) and isinstance(seed, TensorFacts) and name_node is not None):
                continue
            if not _differ(out.shape, seed.shape):
                continue
            name = source_of(name_node, event)
            runtime = RUNTIME.format(seed=torch_size(seed.shape), out=torch_size(out.shape))
            fixes = ()
            if seed_node is not None:
                fixes = (FixSpec(self.text("fix", locale, torch=torch, name=name),
                                 (Edit("replace", seed_node, f"{torch}.ones_like({name})", event),),
                                 safe=False),)
            yield Report(event.node, self.text("message", locale, name=name, runtime=runtime,
                                               seed_shape=shape_text(seed.shape), out_shape=shape_text(out.shape)),
                         fixes, event)


def _first(d):
    return d.first if isinstance(d, Sym) else d


def _differ(a, b) -> bool:
    """Both shapes known where the program first reaches them, and different: a
    different number of dimensions, or a dimension known on both sides that differs."""
    if a is None or b is None:
        return False
    if len(a) != len(b):
        return True
    a, b = tuple(_first(d) for d in a), tuple(_first(d) for d in b)
    return any(x is not None and y is not None and x != y for x, y in zip(a, b))
