"""AG104 int-requires-grad: asking an integer or bool tensor to require grad."""
from __future__ import annotations

import ast

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import NumberValue, TensorFacts, dtype_kind
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import code_of, keyword_node, short, source_of, with_keyword
from autograd_lsp.analysis.trace import AttrAssignEvent


RUNTIME_FACTORY = "Only Tensors of floating point and complex dtype can require gradients"
RUNTIME_ATTRIBUTE = "only Tensors of floating point and complex dtype can require gradients"
RUNTIME_METHOD = "only Tensors of floating point dtype can require gradients"


# Label logits kept per sample and learned with the model (noisy-label training).
_LABEL_LOGITS = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "config = {{'num_classes': 3, 'K': 10}}\n"
    "class LabelLogits:\n"
    "    def __init__(self, labels, num_classes, K):\n"
    "        self.logits = K * {one_hot}\n"
    "    def start(self):\n"
    "        self.logits.requires_grad_()\n"
    "table = LabelLogits(torch.randint(0, 3, (16,)), config['num_classes'], config['K'])\n"
    "table.start()\n"
)


# The coordinates of every pixel of an image, as (row, column) pairs.
_PIXEL_GRID = (
    "import torch\n"
    "side = 8\n"
    "xs = torch.arange(side)\n"
    "coords = torch.stack(torch.meshgrid(xs, xs, indexing='ij'), dim=-1).reshape(-1, 2){cast}\n"
    "model_input = coords.clone().requires_grad_(True)\n"
)


class IntRequiresGrad(Rule):
    code = "AG104"
    name = "int-requires-grad"
    severity = "error"
    summary = {
        "en": "requires_grad=True on an integer or bool tensor",
        "zh": "对整数或布尔张量设置 requires_grad=True",
    }
    explanation = {
        "en": (
            "Gradients exist only for floating point and complex tensors. `torch.tensor([1, 2], "
            "requires_grad=True)`, `torch.arange(5, requires_grad=True)`, `t.requires_grad = True` "
            "and `t.requires_grad_()` on an integer or bool tensor raise `RuntimeError: "
            f"{RUNTIME_FACTORY}` (lower-case `only` for the attribute; `{RUNTIME_METHOD}` for "
            "`requires_grad_()`). Write float literals (`[1.0, 2.0]`) or pass "
            "`dtype=torch.float32`."
        ),
        "zh": (
            "只有浮点和复数张量才有梯度。对整数或布尔张量使用 `torch.tensor([1, 2], requires_grad=True)`、"
            "`torch.arange(5, requires_grad=True)`、`t.requires_grad = True` 或 `t.requires_grad_()` 会抛出 "
            f"`RuntimeError: {RUNTIME_FACTORY}`（属性赋值时首字母小写；`requires_grad_()` 为 "
            f"`{RUNTIME_METHOD}`）。请写浮点字面量（`[1.0, 2.0]`）或传入 `dtype=torch.float32`。"
        ),
    }
    messages = {
        "en": {"message": "`{name}` has dtype {dtype}; requiring grad raises RuntimeError: {runtime}",
               "fix_literals": "Use float literals",
               "fix_dtype": "Pass dtype={torch}.float32"},
        "zh": {"message": "`{name}` 的 dtype 是 {dtype}；要求梯度会抛出 RuntimeError: {runtime}",
               "fix_literals": "改用浮点字面量",
               "fix_dtype": "传入 dtype={torch}.float32"},
    }

    bad = (
        # Class weights learnt from inverse label counts: NumPy counts are integers,
        # and so is their floor division.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "labels = np.random.RandomState(0).choice(4, size=100)\n"
            "counts = torch.as_tensor(np.bincount(labels, minlength=4))\n"
            "weights = nn.Parameter(counts.sum() // counts)\n",
            Raises("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients"),
            line=6),
        # A loader's collate_fn asks for input gradients (for attribution) on the
        # categorical ids too: the first batch raises.
        Example(
            "import torch\n"
            "from torch.utils.data import DataLoader\n"
            "def make_rows(n):\n"
            "    rows = []\n"
            "    for i in range(n):\n"
            "        rows.append({'ids': [i % 5, i % 3], 'dense': [0.5 * i]})\n"
            "    return rows\n"
            "def collate(batch):\n"
            "    ids = torch.tensor([r['ids'] for r in batch], requires_grad=True)\n"
            "    dense = torch.tensor([r['dense'] for r in batch], requires_grad=True)\n"
            "    return ids, dense\n"
            "loader = DataLoader(make_rows(64), batch_size=4, collate_fn=collate)\n"
            "for ids, dense in loader:\n"
            "    print(ids.shape, dense.shape)\n",
            Raises("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients"),
            line=9),
        Example(
            "import torch\n"
            "t = torch.tensor([1, 2, 3], requires_grad=True)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=2),
        # Shift indices computed in NumPy, kept on the module as a parameter.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "class Shift(nn.Module):\n"
            "    def __init__(self, n):\n"
            "        super().__init__()\n"
            "        index = np.zeros(n).astype(np.int64)\n"
            "        for i in range(n):\n"
            "            index[i] = (i + 1) % n\n"
            "        self.index = nn.Parameter(torch.from_numpy(index))\n"
            "shift = Shift(4)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=10),
        Example(
            "import torch\n"
            "seq_len, dim = 6, 4\n"
            "positions = torch.arange(seq_len)\n"
            "positions.requires_grad_()\n"
            "freqs = torch.exp(-torch.arange(0, dim, 2) / dim)\n"
            "angles = positions[:, None] * freqs[None, :]\n",
            Raises("RuntimeError", RUNTIME_METHOD), line=4),
        Example(
            "import torch\n"
            "idx = torch.randint(0, 10, (4,))\n"
            "idx.requires_grad = True\n",
            Raises("RuntimeError", RUNTIME_ATTRIBUTE), line=3),
        # Class labels drawn with NumPy's generator, then marked like the features.
        Example(
            "import numpy as np\n"
            "import torch\n"
            "rng = np.random.default_rng(1)\n"
            "feats = torch.from_numpy(rng.normal(size=(6, 3))).float().requires_grad_()\n"
            "labels = torch.from_numpy(rng.integers(0, 4, size=6))\n"
            "labels.requires_grad_()\n",
            Raises("RuntimeError", RUNTIME_METHOD), line=6),
        Example(
            "import torch as T\n"
            "steps = T.arange(5, requires_grad=True)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=2),
        Example(
            "import torch\n"
            "mask = torch.zeros(3, dtype=torch.bool, requires_grad=True)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=2),
        # Integer spans from a dataclass config's default_factory.
        Example(
            "import torch\n"
            "from dataclasses import dataclass, field\n"
            "@dataclass\n"
            "class Config:\n"
            "    spans: list = field(default_factory=lambda: [2, 4, 8])\n"
            "cfg = Config()\n"
            "spans = torch.tensor(cfg.spans, requires_grad=True)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=7),
        # An old tutorial's Variable around integer labels.
        Example(
            "import torch\n"
            "from torch.autograd import Variable\n"
            "labels = torch.tensor([0, 2, 1])\n"
            "y = Variable(labels, requires_grad=True)\n",
            Raises("RuntimeError", RUNTIME_FACTORY), line=4),
        # Class counts from bincount are int64: a learnable prior must be cast first.
        Example(
            "import torch\n"
            "labels = torch.tensor([0, 1, 1, 2])\n"
            "prior = torch.bincount(labels, minlength=3).requires_grad_()\n",
            Raises("RuntimeError", RUNTIME_METHOD), line=3),
        # Learnable label distributions started from scaled one-hot labels: an int
        # times an integer tensor is still an integer tensor.
        Example(_LABEL_LOGITS.format(one_hot="F.one_hot(labels, num_classes)"),
                Raises("RuntimeError", RUNTIME_METHOD), line=8),
        # A pixel grid of integer coordinates, made an input to differentiate (a SIREN fit).
        Example(_PIXEL_GRID.format(cast=""), Raises("RuntimeError", RUNTIME_METHOD), line=5),
    )
    good = (
        Example(
            "import torch\n"
            "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "b = torch.arange(5, dtype=torch.float32, requires_grad=True)\n"
            "c = torch.arange(0.0, 1.0, 0.25, requires_grad=True)\n"
            "d = torch.tensor([1, 2], dtype=torch.float64, requires_grad=True)\n"
            "e = torch.arange(4).float().requires_grad_()\n"
            "f = torch.randint(0, 3, (4,))\n"
            "f.requires_grad = False\n"),
        Example(
            "import torch\n"
            "def make(values):\n"
            "    return torch.tensor(values, requires_grad=True)\n"
            "make([0.5, 1.5])\n"),
        Example(_LABEL_LOGITS.format(one_hot="F.one_hot(labels, num_classes).float()")),
        Example(_PIXEL_GRID.format(cast=".float()")),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        for event in trace.calls():
            if event.qualname in api.ACCEPTS_REQUIRES_GRAD:
                result = event.result
                if _is_true(event.kwargs.get("requires_grad")) and isinstance(result, TensorFacts) \
                        and dtype_kind(result.dtype) in ("int", "bool"):
                    yield self._factory_report(event, result, locale, torch)
            elif event.qualname in _WRAPPERS:
                data = event.args[0] if event.args else event.kwargs.get("data")
                flag = event.args[1] if len(event.args) > 1 else event.kwargs.get("requires_grad")
                if isinstance(data, TensorFacts) and dtype_kind(data.dtype) in ("int", "bool") \
                        and (_is_true(flag) or flag is None and _WRAPPERS[event.qualname]):
                    node = event.arg_node("data", 0)
                    yield Report(event.node, self.text(
                        "message", locale, name=short(source_of(node, event)), dtype=data.dtype,
                        runtime=RUNTIME_FACTORY), (), event)
            elif event.method == "requires_grad_" and isinstance(event.receiver, TensorFacts):
                flag = event.args[0] if event.args else event.kwargs.get("requires_grad")
                if (flag is None or _is_true(flag)) and dtype_kind(event.receiver.dtype) in ("int", "bool"):
                    yield Report(event.node, self.text(
                        "message", locale, name=short(source_of(event.node.func.value, event)),
                        dtype=event.receiver.dtype, runtime=RUNTIME_METHOD), (), event)
        for event in trace.of(AttrAssignEvent):
            if event.attr == "requires_grad" and _is_true(event.value) \
                    and isinstance(event.receiver, TensorFacts) \
                    and dtype_kind(event.receiver.dtype) in ("int", "bool"):
                yield Report(event.node, self.text(
                    "message", locale, name=short(source_of(event.node.value, event)),
                    dtype=event.receiver.dtype, runtime=RUNTIME_ATTRIBUTE), (), event)

    def _factory_report(self, event, result: TensorFacts, locale: str, torch: str) -> Report:
        fixes = []
        data = event.arg_node(None, 0)
        explicit_dtype = keyword_node(event, "dtype") is not None
        if event.qualname in api.DATA_FACTORIES and data is not None and not explicit_dtype \
                and _only_int_literals(data):
            fixes.append(FixSpec(self.text("fix_literals", locale),
                                 (Edit("replace", data, _as_floats(source_of(data, event)), event),)))
        if not explicit_dtype:
            fixes.append(FixSpec(self.text("fix_dtype", locale, torch=torch),
                                 (Edit("replace", event.node,
                                       with_keyword(event.node, "dtype", f"{torch}.float32", event), event),)))
        name = source_of(event.node, event)
        if len(name) > 40:
            name = code_of(event.node.func) + "(...)"
        return Report(event.node, self.text("message", locale, name=name, dtype=result.dtype,
                                            runtime=RUNTIME_FACTORY), tuple(fixes), event)


# Constructors that wrap a tensor -> whether they require grad by default
# (`Variable(labels, requires_grad=True)` from old tutorials raises as Parameter does).
_WRAPPERS = {"torch.nn.Parameter": True, "torch.nn.parameter.Parameter": True,
             "torch.autograd.Variable": False, "torch.autograd.variable.Variable": False}


def _is_true(value) -> bool:
    return isinstance(value, NumberValue) and value.kind == "bool" and value.value is True


def _only_int_literals(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _only_int_literals(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(_only_int_literals(e) for e in node.elts)
    return False


def _as_floats(text: str) -> str:
    import libcst as cst  # only to build a fix: libcst costs 0.1 s to import

    class ToFloat(cst.CSTTransformer):
        def leave_Integer(self, original, updated):
            return cst.Float(updated.value + ".0")

    return cst.Module(body=[]).code_for_node(cst.parse_expression(text).visit(ToFloat()))
