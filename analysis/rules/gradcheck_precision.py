"""AG206 gradcheck-precision: gradcheck/gradgradcheck on single-precision inputs."""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import after_operand, operand_text, source_of

WARNING = "is not a double precision floating point or complex"
RUNTIME = "Jacobian mismatch"
_LOW_PRECISION = {"float32", "float16", "bfloat16"}


class GradcheckPrecision(Rule):
    code = "AG206"
    name = "gradcheck-precision"
    severity = "warning"
    summary = {
        "en": "gradcheck on float32 inputs: finite differences too coarse, spurious failure",
        "zh": "对 float32 输入做 gradcheck：有限差分精度不足，会误报失败",
    }
    explanation = {
        "en": (
            "`torch.autograd.gradcheck` compares analytic gradients with finite differences taken "
            "with a tiny `eps` (1e-6). In float32 that perturbation is lost in rounding, so the "
            f"check warns `UserWarning: Input #0 requires gradient and {WARNING}` and then fails "
            f"with a spurious `GradcheckError: {RUNTIME}` although the gradient is right. Make "
            "the inputs float64 (`dtype=torch.float64`, or `.double()`; a module under test needs "
            "`.double()` too)."
        ),
        "zh": (
            "`torch.autograd.gradcheck` 用很小的 `eps`（1e-6）做有限差分并与解析梯度比较。float32 下这点扰动会被舍入误差"
            f"吞掉，于是先警告 `UserWarning: Input #0 requires gradient and {WARNING}`，再误报 "
            f"`GradcheckError: {RUNTIME}`，尽管梯度是对的。请把输入改成 float64（`dtype=torch.float64` 或 "
            "`.double()`；被测模块也要 `.double()`）。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` is {{dtype}}: {{checker}} warns that it {WARNING} and then "
                          f"fails with a spurious GradcheckError: {RUNTIME}; use float64",
               "fix": "Check in float64: {name}.double()"},
        "zh": {"message": f"`{{name}}` 是 {{dtype}}：{{checker}} 会警告 {WARNING}，随后误报 "
                          f"GradcheckError: {RUNTIME}；请用 float64",
               "fix": "用 float64 检查：{name}.double()"},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.autograd import gradcheck\n"
            "torch.manual_seed(123)\n"
            "layer = nn.Linear(2, 1)\n"
            "inp = torch.rand(1, 2, requires_grad=True)\n"
            "test = gradcheck(layer, (inp,), eps=1e-6, atol=1e-3)\n",
            Raises("GradcheckError", RUNTIME), line=7),
        Example(
            "import torch\n"
            "def func(x):\n"
            "    return x**2 + 3*x\n"
            "input = torch.randn(3, requires_grad=True)\n"
            "torch.autograd.gradcheck(func, input, eps=1e-6, atol=1e-4)\n",
            Raises("GradcheckError", RUNTIME), line=5),
        # The dtype taken from a config that asks for the default: float32.
        Example(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "config = {\"dtype\": torch.get_default_dtype()}\n"
            "x = torch.randn(3, dtype=config[\"dtype\"], requires_grad=True)\n"
            "torch.autograd.gradcheck(lambda t: t ** 3 + 3 * t, (x,))\n",
            Raises("GradcheckError", RUNTIME), line=5),
    )
    good = (
        Example(
            "import torch\n"
            "from torch.autograd import gradcheck\n"
            "def func(x):\n"
            "    return x**2 + 3*x\n"
            "input = torch.randn(3, dtype=torch.double, requires_grad=True)\n"
            "test = gradcheck(func, input, eps=1e-6, atol=1e-4)\n"
            "print(test)\n",
            source="seed:002 5.3"),
        Example(
            "import torch\n"
            "from torch.autograd import gradcheck\n"
            "def softplus(t):\n"
            "    return torch.log1p(torch.exp(t))\n"
            "inp = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)\n"
            "assert gradcheck(softplus, (inp,), eps=1e-6, atol=1e-4)\n"
            "inp32 = torch.randn(4, 3, requires_grad=True)\n"
            "assert gradcheck(softplus, (inp32.double(),), eps=1e-6, atol=1e-4)\n"),
    )

    def check(self, trace, locale):
        for event in trace.calls():
            if event.qualname not in api.GRAD_CHECKERS:
                continue
            arg = event.arg_node("inputs", 1)
            if arg is None:
                continue
            for value, node in event.extra.get("gradcheck_inputs", ()):
                if isinstance(value, TensorFacts) and value.requires_grad is True \
                        and value.dtype in _LOW_PRECISION:
                    name = source_of(node if node is not None else arg, event)
                    checker = event.qualname.rsplit(".", 1)[-1]
                    fixes = ()
                    if node is not None:
                        fixes = (FixSpec(self.text("fix", locale, name=operand_text(node, event)),
                                         after_operand(node, ".double()", event), safe=False),)
                    yield Report(event.node, self.text("message", locale, name=name,
                                                       dtype=value.dtype, checker=checker), fixes, event)
                    break
