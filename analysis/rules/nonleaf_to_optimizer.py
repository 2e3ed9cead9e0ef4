"""AG112 nonleaf-to-optimizer: an optimizer given a tensor that is not a leaf."""
from __future__ import annotations

import libcst as cst

from analysis import torch_api as api
from analysis.events import CallEvent
from analysis.facts import SequenceValue, TensorFacts
from analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from analysis.rulekit import code_of, with_keyword

RUNTIME = "can't optimize a non-leaf Tensor"


class NonleafToOptimizer(Rule):
    code = "AG112"
    name = "nonleaf-to-optimizer"
    severity = "error"
    summary = {
        "en": "a non-leaf tensor handed to an optimizer",
        "zh": "把非叶子张量交给优化器",
    }
    explanation = {
        "en": (
            "An optimizer updates leaves in place. `torch.randn(3, requires_grad=True).double()`, "
            "`.cuda()`, `.to(device)` (when the device really changes) or `* 0.01` return a new, "
            "computed tensor, and the optimizer refuses it: `ValueError: "
            f"{RUNTIME}`. Create the tensor with its final dtype and device and "
            "`requires_grad=True` (`torch.randn(3, dtype=torch.float64, requires_grad=True)`), or "
            "call `.requires_grad_()` after the conversion."
        ),
        "zh": (
            "优化器原地更新叶子。`torch.randn(3, requires_grad=True).double()`、`.cuda()`、`.to(device)`"
            "（设备确实改变时）或 `* 0.01` 返回的是新的计算结果，优化器会拒绝它：`ValueError: "
            f"{RUNTIME}`。请直接以最终的 dtype、设备和 `requires_grad=True` 创建张量"
            "（`torch.randn(3, dtype=torch.float64, requires_grad=True)`），或在转换之后调用 `.requires_grad_()`。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` is not a leaf (it is the result of {{op}}): the optimizer raises "
                          f"ValueError: {RUNTIME}",
               "fix": "Create it as a leaf: {code}"},
        "zh": {"message": f"`{{name}}` 不是叶子（它是 {{op}} 的结果）：优化器会抛出 ValueError: {RUNTIME}",
               "fix": "直接创建为叶子：{code}"},
    }

    bad = (
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True).double()\n"
            "x = torch.randn(10, 3, dtype=torch.float64)\n"
            "optimizer = torch.optim.SGD([w], lr=0.1)\n",
            Raises("ValueError", RUNTIME), line=4),
        Example(
            "import torch\n"
            "scale = torch.ones(4, requires_grad=True) * 0.01\n"
            "opt = torch.optim.Adam([scale], lr=1e-3)\n",
            Raises("ValueError", RUNTIME), line=3),
    )
    good = (
        Example(
            "import torch\n"
            "w = torch.randn(3, dtype=torch.float64, requires_grad=True)\n"
            "b = torch.randn(3).double().requires_grad_()\n"
            "v = torch.randn(3, requires_grad=True).float()\n"
            "c = torch.zeros(3, requires_grad=True).to('cpu')\n"
            "optimizer = torch.optim.SGD([w, b, v, c], lr=0.1)\n"),
        Example(
            "import torch\n"
            "def make(device):\n"
            "    w = torch.randn(3, requires_grad=True).to(device)\n"
            "    return torch.optim.SGD([w], lr=0.1)\n"
            "make('cpu')\n"),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        for event in trace.of(CallEvent):
            if not (event.qualname or "").startswith("torch.optim.") \
                    or event.qualname.rsplit(".", 1)[-1] not in api.OPTIMIZERS:
                continue
            params = event.args[0] if event.args else event.kwargs.get("params")
            arg = event.arg_node("params", 0)
            if not isinstance(params, SequenceValue) or arg is None \
                    or not isinstance(arg.value, (cst.List, cst.Tuple)):
                continue
            for value, element in zip(params.items, arg.value.elements):
                if isinstance(value, TensorFacts) and value.is_leaf is False and value.requires_grad:
                    yield self._report(event, value, element.value, locale, torch)
                    break

    def _report(self, event, value: TensorFacts, node, locale: str, torch: str) -> Report:
        origin = value.origin
        op = code_of(origin.func.attr) + "()" if isinstance(origin, cst.Call) \
            and isinstance(origin.func, cst.Attribute) else "an operation"
        fixes = ()
        rewritten = _as_leaf_factory(origin, torch)
        if rewritten is not None:
            fixes = (FixSpec(self.text("fix", locale, code=rewritten),
                             (Edit("replace", origin, rewritten),)),)
        return Report(event.node, self.text("message", locale, name=code_of(node), op=op), fixes)


_CONVERSIONS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16"}


def _as_leaf_factory(origin, torch: str) -> str | None:
    """`torch.randn(3, requires_grad=True).double()` -> `torch.randn(3, dtype=torch.float64,
    requires_grad=True)`; likewise `.cuda()` -> `device="cuda"`. None for anything else."""
    if not (isinstance(origin, cst.Call) and isinstance(origin.func, cst.Attribute)
            and isinstance(origin.func.value, cst.Call) and not origin.args):
        return None
    inner, method = origin.func.value, origin.func.attr.value
    if method in _CONVERSIONS and all(a.keyword is None or a.keyword.value != "dtype" for a in inner.args):
        code = with_keyword(inner, "dtype", f"{torch}.{_CONVERSIONS[method]}")
    elif method == "cuda" and all(a.keyword is None or a.keyword.value != "device" for a in inner.args):
        code = with_keyword(inner, "device", '"cuda"')
    else:
        return None
    # keep requires_grad=True last, as people write it
    call = cst.parse_expression(code)
    if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in call.args):
        flag = next(a for a in call.args if a.keyword is not None and a.keyword.value == "requires_grad")
        code = with_keyword(call, "requires_grad", code_of(flag.value))
    return code
