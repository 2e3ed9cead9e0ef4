"""What the analysis knows about torch's API, as plain data.

The tables are measured from torch by `tools/generate_torch_tables.py` into
`analysis/torch_tables.py`; `tests/test_torch_tables.py` fails when they drift
from the installed torch. This module gives them the names the interpreter and
the rules use; nothing here imports torch.
"""
from __future__ import annotations

from autograd_lsp.analysis import torch_tables as _t

# Factories: qualified name -> the dtype they make by default ("float32" follows
# torch's default dtype; None: depends on an argument, see FACTORY_DTYPES_BY_KIND).
FACTORIES: dict[str, str | None] = dict(_t.FACTORY_DTYPES)
# torch.full / torch.arange: kind of the fill value or of the bounds -> dtype.
FACTORY_DTYPES_BY_KIND: dict[str, dict[str, str]] = _t.FACTORY_DTYPES_BY_KIND
# Factories taking a tensor whose shape and dtype they copy.
LIKE_FACTORIES = frozenset(_t.LIKE_FACTORIES)
# Factories whose first argument is data (lists, numbers or tensors); the dtype
# follows the data's kind (DATA_DTYPES).
DATA_FACTORIES = frozenset(_t.DATA_FACTORIES)
DATA_DTYPES: dict[str, str] = _t.DATA_DTYPES
# Of those, the ones that cut a tensor argument from its graph (torch.as_tensor
# and torch.asarray return the tensor itself).
DATA_FACTORIES_CUTTING_GRAPH = frozenset(_t.DATA_FACTORIES_CUTTING_GRAPH)
# Factories that take requires_grad= (torch.as_tensor does not).
ACCEPTS_REQUIRES_GRAD = frozenset(_t.ACCEPTS_REQUIRES_GRAD)

DTYPES: dict[str, str] = _t.DTYPES
# Methods that convert dtype: method -> resulting dtype.
DTYPE_METHODS: dict[str, str] = _t.DTYPE_METHODS
# Method on a float32 leaf that requires grad -> "new" (always a new non-leaf) or
# "same_if_unchanged" (the leaf itself when dtype and device stay, else a non-leaf).
LEAF_CONVERSIONS: dict[str, str] = _t.LEAF_CONVERSIONS

# Element-wise ops that keep their input's shape and dtype and are differentiable:
# the same name as a method, as torch.NAME, torch.special.NAME or
# torch.nn.functional.NAME (a name that changes shape in any of them is left out).
UNARY_OPS = frozenset(_t.ELEMENTWISE)
ELEMENTWISE_METHODS = frozenset(_t.ELEMENTWISE_METHODS)
ELEMENTWISE_TORCH = frozenset(_t.ELEMENTWISE_TORCH)
ELEMENTWISE_FUNCTIONAL = frozenset(_t.ELEMENTWISE_FUNCTIONAL)
ELEMENTWISE_SPECIAL = frozenset(_t.ELEMENTWISE_SPECIAL)

# Ops whose backward needs no saved tensor: backward through them twice works.
# Every other op saves something, so a second backward fails. Keys are the
# interpreter's op names ("add", "getitem", "to", ...), and for binary ops also
# "<op>_tensor" / "<op>_scalar".
NON_SAVING_OPS = frozenset(_t.SAVES_NOTHING)
# Reductions that give a 0-dim tensor when called without `dim`.
REDUCTIONS = frozenset(_t.REDUCTIONS)
REDUCTIONS_WITH_DIM = frozenset(_t.REDUCTIONS_WITH_DIM)
# With a dim these give (values, indices), not a tensor.
REDUCTIONS_DIM_RETURNS_PAIR = frozenset(_t.REDUCTIONS_DIM_RETURNS_PAIR)
# Reductions whose result is not the input's float dtype (and has no grad): name -> dtype.
REDUCTION_DTYPES: dict[str, str] = _t.REDUCTION_DTYPES
INDEX_RESULTS: dict[str, str] = _t.INDEX_RESULTS
# Methods giving one tensor of another shape (chunk/split/unbind give tuples).
SHAPE_OPS = frozenset(_t.SHAPE_OPS)
SHAPE_OPS_RETURNING_TUPLE = frozenset(_t.SHAPE_OPS_RETURNING_TUPLE)

# In-place tensor methods: they change the tensor's data (its version counter).
INPLACE_METHODS = frozenset(_t.INPLACE_METHODS)
# In-place methods torch still runs on a leaf that requires grad (logical_*_).
INPLACE_ALLOWED_ON_LEAF = frozenset(_t.INPLACE_ALLOWED_ON_LEAF)
# Methods with a trailing underscore that change nothing in place (requires_grad_ &c.).
NOT_INPLACE_UNDERSCORE = frozenset(_t.NOT_INPLACE_UNDERSCORE)
# Augmented assignments that modify a tensor in place ("+=", ...); "@=" rebinds.
INPLACE_OPERATORS = frozenset(_t.INPLACE_OPERATORS)

# torch.nn classes whose call saves tensors for backward (they hold weights).
NN_LAYERS_WITH_PARAMS = frozenset(_t.NN_LAYERS_WITH_PARAMS)
NN_LAYERS_WITHOUT_PARAMS = frozenset(_t.NN_LAYERS_WITHOUT_PARAMS)
NN_CONTAINERS = frozenset(_t.NN_CONTAINERS)
NN_ACTIVATIONS_SAVING_OUTPUT = frozenset(_t.NN_ACTIVATIONS_SAVING_OUTPUT)
NN_ACTIVATIONS_SAVING_INPUT = frozenset(_t.NN_ACTIVATIONS_SAVING_INPUT)
NN_INPLACE_CAPABLE = frozenset(_t.NN_INPLACE_CAPABLE)
# nn class -> its constructor's positional parameter names, in order (nn.Linear(3, 4): in_features=3).
NN_CONSTRUCTOR_PARAMS: dict = _t.NN_CONSTRUCTOR_PARAMS
# nn class -> parameter -> per dim: argument name, (name, i), ("*", k, name), an int, or None.
NN_PARAM_SHAPES: dict = _t.NN_PARAM_SHAPES
# nn classes whose output has their input's shape (activations, dropout, norms, Identity).
NN_SHAPE_PRESERVING = frozenset(_t.NN_SHAPE_PRESERVING)
# nn classes whose forward returns a tuple (RNN, LSTM, GRU, LSTMCell, MultiheadAttention).
NN_RETURNS_TUPLE = frozenset(_t.NN_RETURNS_TUPLE)
# nn classes with parameters whose backward needs their input: changing it in place breaks backward.
NN_LAYERS_SAVING_INPUT = frozenset(_t.NN_LAYERS_SAVING_INPUT)
# loss (nn class or functional name) -> its reduction="none" shape: "input" or "drop_class_dim".
LOSS_UNREDUCED_SHAPE: dict = _t.LOSS_UNREDUCED_SHAPE

# nn loss classes and functional losses -> default reduction; with "mean",
# "batchmean" or "sum" they return a 0-dim tensor.
NN_LOSS_REDUCTION: dict[str, str] = _t.NN_LOSS_REDUCTION
FUNCTIONAL_LOSS_REDUCTION: dict[str, str] = _t.FUNCTIONAL_LOSS_REDUCTION
NN_LOSSES = frozenset(NN_LOSS_REDUCTION)
FUNCTIONAL_LOSSES = frozenset(FUNCTIONAL_LOSS_REDUCTION)

OPTIMIZERS = frozenset(_t.OPTIMIZERS)

# torch.* / F.* functions (and Tensor methods of the same names) giving one
# differentiable tensor: qualified name -> grad_fn.
DIFFERENTIABLE_FUNCTIONS: dict[str, str] = _t.DIFFERENTIABLE_FUNCTIONS
DIFFERENTIABLE_METHODS = frozenset(_t.DIFFERENTIABLE_METHODS)

GRAD_CHECKERS = frozenset(_t.GRAD_CHECKERS)
NO_GRAD_CONTEXTS = frozenset(_t.NO_GRAD_CONTEXTS)
ENABLE_GRAD_CONTEXTS = frozenset(_t.ENABLE_GRAD_CONTEXTS)
SET_GRAD_ENABLED = frozenset(_t.SET_GRAD_ENABLED)
# `Variable(t)`: since torch 0.4 it makes a plain tensor and ignores `volatile=`.
VARIABLE_CLASSES = frozenset(_t.VARIABLE_CLASSES)


def _operand_key(op: str, arity_shapes: tuple) -> str | None:
    """The GRAD_FN_BY_OPERANDS key for operand shapes (None: a Python number)."""
    ranks = []
    for shape in arity_shapes:
        if shape is None:
            ranks.append("s")
        elif op == "matmul":
            # matmul was measured up to rank 3; higher ranks batch the same way.
            ranks.append(str(min(len(shape), 3)))
        else:
            # Element-wise ops name their grad_fn the same for every tensor rank.
            ranks.append("1")
    return ",".join(ranks)


def grad_fn_name(op: str, *, arity_shapes: tuple | None = None) -> str | None:
    """The grad_fn class name torch gives the result of `op`, or None when unknown.

    `arity_shapes` gives the operands' shapes (a tuple of ints, or None for a
    Python number) where the name depends on them: `matmul` (Dot/Mv/Mm...), `pow`
    by a tensor or a number, `sub`/`div` with a number on the left. Reductions
    called with a dim are "<op>_dim" ("sum_dim" -> SumBackward1)."""
    if arity_shapes is not None:
        by_operands = _t.GRAD_FN_BY_OPERANDS.get(op)
        if by_operands is not None:
            return by_operands.get(_operand_key(op, arity_shapes))
    return _t.GRAD_FN.get(op)


def _measured(key: str, table) -> bool | None:
    return (key in table) if key in _t.MEASURED_OPS else None


def _binary_key(op: str, other_is_tensor: bool | None) -> str:
    if other_is_tensor is not None:
        key = f"{op}_{'tensor' if other_is_tensor else 'scalar'}"
        if key in _t.MEASURED_OPS:
            return key
    return op


def saves_input(op: str, other_is_tensor: bool = True) -> bool | None:
    """Whether modifying `op`'s (first) input in place after the op makes backward
    raise; None when not measured. Binary ops were measured with both operands
    requiring grad (`a * b`) and with a Python number (`a * 2`)."""
    return _measured(_binary_key(op, other_is_tensor), _t.SAVES_INPUT)


def saves_output(op: str, other_is_tensor: bool | None = None) -> bool | None:
    """Whether modifying `op`'s result in place makes backward raise; None when not measured."""
    return _measured(_binary_key(op, other_is_tensor), _t.SAVES_OUTPUT)

