"""The NumPy functions the analysis says convert a tensor that requires grad do
raise torch's error: proven here with torch and NumPy, one process for all."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis.semantics.external import NUMPY_CONVERTING_TENSOR, NUMPY_UFUNCS

NEEDS_MORE = {"numpy.percentile": (50,), "numpy.quantile": (0.5,), "numpy.expand_dims": (0,),
              "numpy.power": (2,), "numpy.maximum": (0.0,), "numpy.minimum": (0.0,), "numpy.add": (1.0,),
              "numpy.subtract": (1.0,), "numpy.multiply": (2.0,), "numpy.divide": (2.0,),
              "numpy.clip": (0.0, 1.0), "numpy.allclose": (0.0,), "numpy.isclose": (0.0,),
              "numpy.dot": ([1.0] * 4,), "numpy.outer": ([1.0, 2.0],)}


@pytest.mark.parametrize("qualname", sorted(NUMPY_CONVERTING_TENSOR | NUMPY_UFUNCS))
def test_converts_a_tensor_that_requires_grad(qualname):
    torch = pytest.importorskip("torch")
    numpy = pytest.importorskip("numpy")
    function = numpy
    for part in qualname.split(".")[1:]:
        function = getattr(function, part)
    t = torch.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        function(t, *NEEDS_MORE.get(qualname, ()))


_OPERATORS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__",
              "pow": "__pow__", "floor_divide": "__floordiv__", "remainder": "__mod__"}
_NUMBERS = {"int": 3, "float": 1e-3}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64"])
@pytest.mark.parametrize("op", sorted(_OPERATORS))
@pytest.mark.parametrize("other", ["int", "float", "float64", "float32", "int64"])
def test_array_arithmetic_gives_numpys_dtype(dtype, op, other):
    """Where the analysis names the dtype of `array <op> other`, NumPy agrees."""
    numpy = pytest.importorskip("numpy")
    from autograd_lsp.analysis.facts import NumberValue
    from autograd_lsp.analysis.semantics.external import NdArray, array_arithmetic
    array = numpy.ones(3, dtype=dtype)
    if other in _NUMBERS:
        value, operand = _NUMBERS[other], NumberValue(other, _NUMBERS[other])
    else:
        value, operand = numpy.ones(3, dtype=other), NdArray(dtype=other)
    claimed = array_arithmetic(op, NdArray((3,), dtype=dtype), operand).dtype
    if claimed is not None:
        assert str(getattr(array, _OPERATORS[op])(value).dtype) == claimed


_LITERALS = ["[[5]]", "[1, 2, 3]", "(4, 5)", "[True, False]", "[[1, 0], [True, 2]]", "[1.5, 2]",
             "[[0.0]]", "[1, 2.0, True]"]


@pytest.mark.parametrize("literal", _LITERALS)
def test_array_of_literals_has_numpys_dtype(literal):
    """`np.array(<numbers>)` then `torch.from_numpy(...).requires_grad_()`: reported as
    int-requires-grad exactly when NumPy makes an integer or bool array (and torch raises)."""
    numpy = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    from autograd_lsp.analysis import analyze
    source = f"import numpy as np\nimport torch\na = np.array({literal})\ntorch.from_numpy(a).requires_grad_()\n"
    reported = any(f.name == "int-requires-grad" for f in analyze(source))
    array = numpy.array(eval(literal))
    try:
        torch.from_numpy(array).requires_grad_()
        raised = False
    except RuntimeError:
        raised = True
    assert reported == raised == (array.dtype.kind in "iub")
