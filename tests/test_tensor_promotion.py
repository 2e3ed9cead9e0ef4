"""Where the analysis names the dtype of `tensor <op> number` or `tensor <op> tensor`,
torch agrees: proven with torch, one process for all."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis.facts import NumberValue, TensorFacts
from autograd_lsp.analysis.semantics.tensors import _promote

_OPERATORS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__",
              "pow": "__pow__", "floor_divide": "__floordiv__", "remainder": "__mod__"}
# Python numbers, by the kind the analysis gives them.
_NUMBERS = {"python int": ("int", 3), "python float": ("float", 0.5), "python bool": ("bool", True)}
_DTYPES = ["float64", "float32", "float16", "int64", "int32", "uint8", "bool"]


def _operand(kind: str):
    torch = pytest.importorskip("torch")
    if kind in _NUMBERS:
        number_kind, value = _NUMBERS[kind]
        return value, NumberValue(number_kind, value)
    return torch.full((3,), 2).to(getattr(torch, kind)), TensorFacts(tid=kind, dtype=kind)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("op", sorted(_OPERATORS))
@pytest.mark.parametrize("other", sorted(_NUMBERS) + _DTYPES)
def test_arithmetic_gives_torchs_dtype(dtype, op, other):
    tensor, tensor_facts = _operand(dtype)
    value, value_facts = _operand(other)
    for (a, b), facts in (((tensor, value), (tensor_facts, value_facts)),
                          ((value, tensor), (value_facts, tensor_facts))):
        claimed = _promote(facts[0], facts[1], op)
        if claimed is None:
            continue
        try:
            result = getattr(a, _OPERATORS[op])(b) if hasattr(a, "dtype") else \
                getattr(b, "__r" + _OPERATORS[op][2:])(a)
        except (RuntimeError, ZeroDivisionError):
            continue          # torch refuses the operation: no dtype to compare
        assert str(result.dtype).removeprefix("torch.") == claimed, (a, op, b)


def test_an_int_times_one_hot_labels_is_an_integer_tensor():
    assert _promote(NumberValue("int", 10), TensorFacts(tid=1, dtype="int64"), "mul") == "int64"
    assert _promote(TensorFacts(tid=2, dtype="bool"), NumberValue("int", 1), "add") == "int64"
