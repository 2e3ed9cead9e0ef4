"""AG112 nonleaf-to-optimizer: an optimizer given a tensor that is not a leaf."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import code_of, source_of, with_keyword
from autograd_lsp.analysis.trace import is_optimizer


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
        # In a parameter group of its own, beside a module's parameters.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Linear(3, 1)\n"
            "temperature = torch.ones(1, requires_grad=True).double()\n"
            "opt = torch.optim.Adam([\n"
            "    {'params': net.parameters(), 'lr': 1e-3},\n"
            "    {'params': temperature, 'lr': 0.1},\n"
            "])\n",
            Raises("ValueError", RUNTIME), line=5, column=7),
        # Whichever device is picked, the cast to float64 makes a new tensor.
        Example(
            "import torch\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "spec = torch.randn(1, 16, 24, requires_grad=True).to(device, torch.float64)\n"
            "optimizer = torch.optim.Adam([spec], lr=0.02)\n",
            Raises("ValueError", RUNTIME), line=4),
        # SAC's temperature: np.log of a float is float64, so .float() makes a new tensor.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "log_alpha = torch.tensor(np.log(0.2), requires_grad=True).float()\n"
            "alpha_optim = torch.optim.Adam([log_alpha], lr=3e-4)\n",
            Raises("ValueError", RUNTIME), line=4),
        # A spectrogram to optimise, started as small noise: NumPy's randn times a
        # float stays float64, so .float() makes a new tensor.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "noise = np.random.randn(16, 24) * 1e-3\n"
            "spec = torch.from_numpy(noise)[None, None].requires_grad_().float()\n"
            "optimizer = torch.optim.Adam([spec], lr=0.02)\n",
            Raises("ValueError", RUNTIME), line=5),
    )
    good = (
        # Cast to float32 first: times a Python float it stays float32, .float() is
        # the tensor itself, a leaf.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "noise = np.random.randn(16, 24).astype(np.float32) * 1e-3\n"
            "spec = torch.from_numpy(noise)[None, None].requires_grad_().float()\n"
            "optimizer = torch.optim.Adam([spec], lr=0.02)\n"),
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
        # On the CPU this is the leaf itself (a GPU would make a copy, which the
        # analysis cannot tell from here).
        Example(
            "import torch\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "spec = torch.randn(1, 16, 24, requires_grad=True).to(device)\n"
            "optimizer = torch.optim.Adam([spec], lr=0.02)\n"),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        calls = trace.calls()
        by_node = {e.node: e for e in calls}
        for event in calls:
            if not is_optimizer(event.result) or "params" not in event.extra:
                continue
            for value in event.extra["params"]:
                if isinstance(value, TensorFacts) and value.is_leaf is False and value.requires_grad:
                    yield self._report(event, value, locale, torch, by_node)
                    break

    def _report(self, event, value: TensorFacts, locale: str, torch: str, by_node: dict) -> Report:
        origin = value.origin
        made = by_node.get(origin)
        op = f"{origin.func.attr}()" if isinstance(origin, ast.Call) \
            and isinstance(origin.func, ast.Attribute) else "an operation"
        fixes = ()
        rewritten = _as_leaf_factory(origin, made, torch) if made is not None else None
        if rewritten is not None:
            fixes = (FixSpec(self.text("fix", locale, code=rewritten),
                             (Edit("replace", origin, rewritten, made),)),)
        arg = event.arg_node("params", 0)
        element = _element_of(arg)
        named = element
        while isinstance(named, (ast.List, ast.Tuple)) and len(named.elts) == 1:
            named = named.elts[0]            # a group's `"params": [latents]` names `latents`
        name = code_of(named) if named is not None else source_of(arg, event) if arg is not None else "params"
        # At the element when it is on the line the optimizer is made on; a call over
        # several lines (param groups) is reported where it starts, where torch raises.
        at = element if element is not None and element.lineno == event.node.lineno else event.node
        return Report(at, self.text("message", locale, name=name, op=op), fixes, event)


def _element_of(arg):
    """The element of a literal list of parameters (or of its groups' "params") that
    holds the tensor: the only one, or the only one that is no module's `.parameters()`."""
    if not isinstance(arg, (ast.List, ast.Tuple)):
        return None
    elements = []
    for item in arg.elts:
        if isinstance(item, ast.Dict):
            item = next((v for k, v in zip(item.keys, item.values)
                         if isinstance(k, ast.Constant) and k.value == "params"), None)
        if item is None or isinstance(item, ast.Starred):
            return None
        elements.append(item)
    if len(elements) == 1:
        return elements[0]
    tensors = [e for e in elements if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                              and n.func.attr in ("parameters", "named_parameters")
                                              for n in ast.walk(e))]
    return tensors[0] if len(tensors) == 1 else None


_CONVERSIONS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16"}


def _as_leaf_factory(origin, made, torch: str) -> str | None:
    """`torch.randn(3, requires_grad=True).double()` -> `torch.randn(3, dtype=torch.float64,
    requires_grad=True)`; likewise `.cuda()` -> `device="cuda"`. None for anything else."""
    if not (isinstance(origin, ast.Call) and isinstance(origin.func, ast.Attribute)
            and isinstance(origin.func.value, ast.Call) and not origin.args and not origin.keywords):
        return None
    inner, method = origin.func.value, origin.func.attr
    keywords = {k.arg for k in inner.keywords}
    if method in _CONVERSIONS and "dtype" not in keywords:
        code = with_keyword(inner, "dtype", f"{torch}.{_CONVERSIONS[method]}", made)
    elif method == "cuda" and "device" not in keywords:
        code = with_keyword(inner, "device", '"cuda"', made)
    else:
        return None
    # keep requires_grad=True last, as people write it
    flag = next((k for k in inner.keywords if k.arg == "requires_grad"), None)
    if flag is not None:
        call = ast.parse(code, mode="eval").body
        code = _move_last(code, call, "requires_grad")
    return code


def _move_last(code: str, call: ast.Call, keyword: str) -> str:
    import libcst as cst
    tree = cst.parse_expression(code)
    moved = [a for a in tree.args if a.keyword is not None and a.keyword.value == keyword]
    rest = [a for a in tree.args if a not in moved]
    args = rest + moved
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]] + [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return cst.Module(body=[]).code_for_node(tree.with_changes(args=args))
