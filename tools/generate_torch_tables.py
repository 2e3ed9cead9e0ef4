"""Build `analysis/torch_tables.py` by running the installed torch on tiny tensors.

The analysis never imports torch (it would cost over a second per start), so
what it knows about torch's API is plain data. This script measures that data:
every entry comes from calling torch, except the few constants marked as
documented (CUDA cannot run here).

    python tools/generate_torch_tables.py          # rewrite the tables
    python tools/generate_torch_tables.py --check  # exit 1 with a diff if they would change
"""
from __future__ import annotations

import argparse
import difflib
import functools
import inspect
import sys
import typing
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "analysis" / "torch_tables.py"

# Error texts that identify what torch did.
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation"
MODIFIED_INPLACE = "modified by an inplace operation"
SECOND_BACKWARD = "Trying to backward through the graph a second time"

# Shapes every element-wise op accepts and every shape-changing op changes.
SHAPES = ((2, 3), (3, 1, 2), (2, 2), (3, 2, 2))


def leaf(shape=(2, 3), requires_grad=True, dtype=torch.float32):
    # Values in (0.1, 0.9): inside the domain of log, sqrt, acos, logit, atanh...
    return (torch.rand(shape, dtype=dtype) * 0.8 + 0.1).requires_grad_(requires_grad)


def attempt(fn):
    """fn() or the exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as exc:  # noqa: BLE001 - every failure is data here
        return exc


def failed(value) -> bool:
    return isinstance(value, Exception)


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


# -- dtypes and factories ------------------------------------------------------------------


def dtypes() -> dict:
    return {f"torch.{name}": dtype_name(value) for name, value in vars(torch).items()
            if isinstance(value, torch.dtype) and not name.startswith("_")}


def dtype_methods() -> dict:
    """Tensor methods named after a dtype: t.double() -> float64."""
    out = {}
    for name in method_names():
        method = getattr(torch.Tensor, name)
        if f"``self.{name}()`` is equivalent to ``self.to(torch." not in (method.__doc__ or ""):
            continue
        result = attempt(lambda: method(leaf(requires_grad=False)))
        if isinstance(result, torch.Tensor):
            out[name] = dtype_name(result.dtype)
    return out


# name -> args giving a small tensor; the dtype of the result is the default.
FACTORY_CALLS = {
    "randn": (2,), "rand": (2,), "zeros": (2,), "ones": (2,), "empty": (2,), "eye": (2,),
    "linspace": (0, 1, 3), "logspace": (0, 1, 3), "randint": (5, (2,)), "randperm": (3,),
    "normal": (0.0, 1.0, (2,)), "full": ((2,), 1.0), "arange": (3,),
}
# Factories whose default dtype depends on an argument's kind: name -> kind -> args.
FACTORY_BY_ARG_KIND = {
    "full": {"int": ((2,), 1), "float": ((2,), 1.0), "bool": ((2,), True)},
    "arange": {"int": (3,), "float": (0.0, 3.0)},
}
DATA_KINDS = {"int": [1, 2], "float": [1.0, 2.0], "bool": [True, False], "complex": [1j]}


def index_results() -> dict:
    """torch functions that compute indices or counts: name -> the integer dtype of
    their result (`torch.bincount(labels)`, `torch.argsort(x)`), on one trial each."""
    x, bounds, labels = torch.tensor([0.5, 2.0, 1.0]), torch.tensor([1.0, 2.0]), torch.tensor([0, 2, 1])
    trials = {"argsort": (x,), "searchsorted": (bounds, x), "bucketize": (x, bounds), "nonzero": (x,),
              "argwhere": (x,), "bincount": (labels,)}
    found = {}
    for name, args in trials.items():
        result = getattr(torch, name)(*args)
        if isinstance(result, torch.Tensor) and not result.is_floating_point():
            found[name] = dtype_name(result.dtype)
    return found


def factories() -> tuple[dict, dict, set, dict, set, set]:
    """(default dtypes, dtypes by argument kind, factories accepting requires_grad,
    data factories' dtype by data kind, like-factories, data factories that copy a tensor)."""
    default, by_kind, accepts_rg = {}, {}, set()
    for name, args in FACTORY_CALLS.items():
        if args is None:
            continue
        fn = getattr(torch, name)
        result = attempt(lambda: fn(*args))
        if not isinstance(result, torch.Tensor):
            continue
        kinds = FACTORY_BY_ARG_KIND.get(name)
        if kinds:
            by_kind[f"torch.{name}"] = {kind: dtype_name(fn(*a).dtype) for kind, a in kinds.items()}
            default[f"torch.{name}"] = None
        else:
            default[f"torch.{name}"] = dtype_name(result.dtype)
        # Accepting the keyword is what matters; a float dtype keeps int factories from raising.
        made = attempt(lambda: fn(*args, dtype=torch.float32, requires_grad=True))
        if isinstance(made, torch.Tensor) and made.requires_grad:
            accepts_rg.add(f"torch.{name}")
    like = set()
    base = leaf(requires_grad=False, dtype=torch.float64)
    for name in dir(torch):
        if not name.endswith("_like") or name.startswith("_"):
            continue
        fn = getattr(torch, name)
        for extra in ((), (1.0,), (5,)):
            result = attempt(lambda: fn(base, *extra))
            if isinstance(result, torch.Tensor):
                if result.shape == base.shape and result.dtype == base.dtype:
                    like.add(f"torch.{name}")
                    made = attempt(lambda: fn(base, *extra, requires_grad=True))
                    if isinstance(made, torch.Tensor) and made.requires_grad:
                        accepts_rg.add(f"torch.{name}")
                break
    data = {kind: dtype_name(torch.tensor(values).dtype) for kind, values in DATA_KINDS.items()}
    data_factories, copies = set(), set()
    graph = leaf() * 1
    # torch.Tensor(...) is a constructor that ignores the data's kind (always float32).
    for name in ("tensor", "as_tensor", "asarray", "Tensor"):
        fn = getattr(torch, name)
        kinds = {kind: attempt(lambda: fn(values)) for kind, values in DATA_KINDS.items()}
        if all(isinstance(v, torch.Tensor) and dtype_name(v.dtype) == data[k] for k, v in kinds.items()):
            data_factories.add(f"torch.{name}")
            made = attempt(lambda: fn([1.0], requires_grad=True))
            if isinstance(made, torch.Tensor) and made.requires_grad:
                accepts_rg.add(f"torch.{name}")
            copy = attempt(lambda: fn(graph))
            if isinstance(copy, torch.Tensor) and not copy.requires_grad:
                copies.add(f"torch.{name}")
    return default, by_kind, accepts_rg, data, like, copies, data_factories


# -- leaf conversions ------------------------------------------------------------------------


# method -> (call that keeps dtype and device, call that changes one of them).
CONVERSIONS = {
    "to": (lambda t: t.to(torch.float32), lambda t: t.to(torch.float64)),
    "type": (lambda t: t.type(torch.float32), lambda t: t.type(torch.float64)),
    "float": (lambda t: t.float(), None),
    "double": (None, lambda t: t.double()),
    "half": (None, lambda t: t.half()),
    "bfloat16": (None, lambda t: t.bfloat16()),
    "cpu": (lambda t: t.cpu(), None),
    "contiguous": (lambda t: t.contiguous(), None),
    "clone": (None, lambda t: t.clone()),
    "mul": (None, lambda t: t * 1),
    "add": (None, lambda t: t + 0),
}
# Not measured: CUDA is not available where the tables are built. Documented
# behaviour of Tensor.cuda(): "If this object is already in CUDA memory and on
# the correct device, then no copy is performed and the original object is
# returned"; otherwise the copy is a new, non-leaf tensor.
DOCUMENTED_CONVERSIONS = {"cuda": "same_if_unchanged"}
# Tensor.cuda() is documented as a copy like Tensor.to(device): the same _to_copy op,
# so the same grad_fn as "to", and like it, it saves no tensor for backward.
DOCUMENTED_GRAD_FN = {"cuda": "ToCopyBackward0"}
DOCUMENTED_SAVES_NOTHING = {"cuda"}


def leaf_conversions() -> dict:
    """method -> "new" (always a new non-leaf) or "same_if_unchanged" (the same
    tensor when dtype and device do not change, a new non-leaf otherwise)."""
    out = {}
    for name, (keep, change) in CONVERSIONS.items():
        x = leaf()
        same = keep is not None and keep(x) is x
        if change is not None:
            y = change(x)
            assert y is not x and not y.is_leaf and y.requires_grad, name
        out[name] = "same_if_unchanged" if same else "new"
    return out


# -- tensor methods: in-place, element-wise, reductions ------------------------------------


def method_names() -> list[str]:
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(torch.Tensor, n)))


def inplace_trials(t):
    other = leaf(tuple(t.shape), requires_grad=False)
    mask = torch.zeros(t.shape, dtype=torch.bool)
    index = torch.zeros(t.shape[0], dtype=torch.long)
    index_full = torch.zeros(t.shape, dtype=torch.long)
    return [(), (0.5,), (0,), (other,), (mask, 0.5), (mask, other), (0, index, 0.5),
            (0, index, other), (0, index_full, other), (0, 1), (other, 0.5), (other, other),
            (2, 0, 1.0), (tuple(t.shape),), (tuple(t.shape), (3, 1)), (index_full, other),
            (other, other, other), ((index,), other), (0, index_full, other, "sum"),
            (0, index, other, "prod"), (lambda v: v,), (other, lambda v, w: v),
            (other, other, lambda v, w, z: v)]


def inplace_methods() -> tuple[set, set, set, set]:
    """(in-place methods, those torch still runs on a leaf that requires grad,
    underscore methods that change nothing in place, underscore methods no trial reached).

    An in-place op on a leaf that requires grad raises before it runs; other calls
    show themselves by bumping the tensor's version counter."""
    inplace, allowed_on_leaf, not_inplace, unverified = set(), set(), set(), set()
    for name in method_names():
        if not name.endswith("_"):
            continue
        verdict = None
        for args in inplace_trials(leaf()):
            x = leaf()
            version = x._version
            result = attempt(lambda: getattr(x, name)(*args))
            if failed(result):
                if LEAF_INPLACE in str(result):
                    verdict = "refused"
                    break
                continue
            verdict = "allowed" if x._version > version else "no-change"
            break
        if verdict == "refused":
            inplace.add(name)
        elif verdict == "allowed":
            inplace.add(name)
            allowed_on_leaf.add(name)
        elif verdict == "no-change":
            not_inplace.add(name)
        else:
            unverified.add(name)
    return inplace, allowed_on_leaf, not_inplace, unverified


INPLACE_OPERATORS = {
    "+=": "__iadd__", "-=": "__isub__", "*=": "__imul__", "/=": "__itruediv__",
    "//=": "__ifloordiv__", "%=": "__imod__", "**=": "__ipow__", "@=": "__imatmul__",
    "&=": "__iand__", "|=": "__ior__", "^=": "__ixor__", "<<=": "__ilshift__", ">>=": "__irshift__",
}


def inplace_operators() -> tuple[set, set]:
    """(augmented assignments that modify the tensor in place, those that rebind a new one)."""
    inplace, rebinding = set(), set()
    for symbol, dunder in INPLACE_OPERATORS.items():
        integer = symbol in ("&=", "|=", "^=", "<<=", ">>=")
        namespace = {"t": torch.ones(2, 2, dtype=torch.long if integer else torch.float32)}
        namespace["other"] = namespace["t"].clone()
        before, version = namespace["t"], namespace["t"]._version
        result = attempt(lambda: exec(f"t {symbol} other", namespace))
        if failed(result):
            continue
        after = namespace["t"]
        if after is before and after._version > version and hasattr(torch.Tensor, dunder):
            inplace.add(symbol)
        else:
            rebinding.add(symbol)
    return inplace, rebinding


def call_forms():
    """Namespaces whose functions take a tensor first: space -> name -> callable(t, *args)."""
    forms = {"method": {n: (lambda t, *a, _n=n, **k: getattr(t, _n)(*a, **k))
                        for n in method_names() if not n.endswith("_")}}
    # The native ops only: arbitrary torch.* functions may have side effects (torch.save).
    native = set(dir(torch._C._VariableFunctions))
    forms["torch"] = {n: getattr(torch, n) for n in sorted(native)
                      if not n.startswith("_") and not n.endswith("_") and hasattr(torch, n)}

    def functions(module):
        return {n: f for n, f in sorted(vars(module).items())
                if not n.startswith("_") and not n.endswith("_") and not isinstance(f, type)
                and (inspect.isbuiltin(f) or inspect.isfunction(f)
                     and f.__module__.startswith(module.__name__))}

    forms["functional"] = functions(F)
    forms["special"] = functions(torch.special)
    return forms


# Extra arguments tried after the tensor, in order: the first that works on every shape decides.
TRIALS = ((), (2,), {"dim": -1})


def call(fn, x, trial):
    return attempt(lambda: fn(x, **trial) if isinstance(trial, dict) else fn(x, *trial))


def classify(fn) -> tuple[str, tuple | dict | None, list]:
    """How fn(t, ...) treats float tensors that require grad, over SHAPES:
    "keeps" (a new tensor of the same shape and dtype, differentiable, on every shape),
    "scalar" (0-dim on every shape it accepts, without arguments), "changes" (a
    different shape or not a tensor), "other" (same shape, other dtype or no grad),
    or "fails". Returns the verdict, the deciding trial and its (input, result) pairs."""
    for trial in TRIALS:
        results = [(x, call(fn, x, trial)) for x in (leaf(shape) for shape in SHAPES)]
        worked = [(x, r) for x, r in results if not failed(r)]
        if not worked:
            continue
        if any(not isinstance(r, torch.Tensor) for _, r in worked):
            return "changes", trial, results
        if any(r.shape != x.shape for x, r in worked):
            if trial == () and len(worked) >= 2 and all(r.dim() == 0 for _, r in worked):
                return "scalar", trial, results
            return "changes", trial, results
        if len(worked) < len(results):
            continue
        if all(r is not x and r.dtype == x.dtype and r.requires_grad and r.layout == torch.strided
               and not r.is_mkldnn and grad_fn_of(r) != "NotImplemented" for x, r in worked):
            return "keeps", trial, results
        return "other", trial, results
    return "fails", None, []


def grad_fn_of(value) -> str | None:
    if isinstance(value, torch.Tensor) and value.grad_fn is not None:
        return type(value.grad_fn).__name__
    return None


def same_grad_fn(results) -> str | None:
    """The grad_fn name every shape gave, or None when they differ."""
    names = {grad_fn_of(r) for _, r in results if isinstance(r, torch.Tensor)}
    return names.pop() if len(names) == 1 else None


def shape_ops_tables(forms):
    """(element-wise per namespace, element-wise names, reductions, grad_fn names
    and trials of those ops, reduction result dtypes that are not the input's)."""
    keeps = {space: {} for space in forms}
    changes, scalar, grad_fns, conflicts, reduction_dtypes = set(), set(), {}, set(), {}
    for space, functions in forms.items():
        for name, fn in functions.items():
            verdict, trial, results = classify(fn)
            if verdict == "keeps":
                keeps[space][name] = (fn, trial)
            elif verdict == "scalar":
                scalar.add(name)
                dtypes = {dtype_name(r.dtype) for _, r in results if isinstance(r, torch.Tensor)}
                if dtypes != {"float32"} and len(dtypes) == 1:
                    reduction_dtypes[name] = dtypes.pop()
            elif verdict == "changes":
                changes.add(name)
            if verdict in ("keeps", "scalar"):
                found = same_grad_fn(results)
                if found is not None and grad_fns.get(name, found) != found:
                    conflicts.add(name)
                if found is not None:
                    grad_fns.setdefault(name, found)
    for name in conflicts:
        del grad_fns[name]
    kept = set().union(*(set(k) for k in keeps.values()))
    elementwise = kept - changes - scalar
    reductions = scalar - kept
    return keeps, elementwise, reductions, grad_fns, {k: v for k, v in reduction_dtypes.items()
                                                      if k in reductions}


# Reductions that need a dim (without one they raise), tried like the others.
DIM_ONLY_CANDIDATES = {"logsumexp"}


def reductions_with_dim(reductions) -> tuple[set, set, dict]:
    """(reductions that accept dim, those returning (values, indices) with a dim,
    grad_fn of the dim form)."""
    accepts, pairs, grad_fns = set(), set(), {}
    for name in sorted(reductions):
        method = getattr(torch.Tensor, name, None) or getattr(torch, name, None)
        if method is None:
            continue
        x = leaf((2, 3))
        result = attempt(lambda: method(x, dim=1))
        if isinstance(result, torch.Tensor) and result.shape == (2,):
            accepts.add(name)
            if grad_fn_of(result):
                grad_fns[f"{name}_dim"] = grad_fn_of(result)
        elif isinstance(result, tuple) and isinstance(result[0], torch.Tensor) and result[0].shape == (2,):
            accepts.add(name)
            pairs.add(name)
            if grad_fn_of(result[0]):
                grad_fns[f"{name}_dim"] = grad_fn_of(result[0])
    return accepts, pairs, grad_fns


# Methods that change shape, with arguments that make them run on a (2, 3) tensor.
SHAPE_OP_EXAMPLES = {
    "view": (6,), "reshape": (6,), "flatten": (), "squeeze": (0,), "unsqueeze": (0,),
    "transpose": (0, 1), "permute": (1, 0), "t": (), "expand": (2, 2, 3), "repeat": (2, 1),
    "narrow": (1, 0, 2), "chunk": (2,), "split": (1,), "unbind": (), "outer": "vector",
    "gather": "index", "index_select": "index1", "masked_select": "mask", "matmul": "matrix",
    "mm": "matrix", "bmm": "batch", "mv": "vector", "expand_as": "big", "view_as": "flat",
    "reshape_as": "flat", "movedim": (0, 1), "swapaxes": (0, 1), "unflatten": (1, (3, 1)),
    "diagonal": (), "tile": (2,), "flip": (0,), "diff": (), "unfold": (1, 2, 1),
}


def shape_ops() -> tuple[set, set]:
    """(methods giving one differentiable tensor of the input's dtype and another
    shape, methods giving a tuple of tensors)."""
    single, several = set(), set()
    for name, spec in SHAPE_OP_EXAMPLES.items():
        x = leaf((2, 3))
        args = {"vector": (leaf((3,)),), "index": (1, torch.zeros(2, 1, dtype=torch.long)),
                "index1": (1, torch.tensor([0])), "mask": (x > 0.5,), "matrix": (leaf((3, 4)),),
                "batch": (leaf((2, 3, 4)),), "big": (leaf((4, 2, 3)),),
                "flat": (leaf((6,)),)}.get(spec, spec) if isinstance(spec, str) else spec
        if name == "outer":
            x = leaf((2,))
        if name == "bmm":
            x = leaf((2, 2, 3))
        if name == "squeeze":
            x = leaf((1, 3))
        result = attempt(lambda: getattr(x, name)(*args))
        if isinstance(result, torch.Tensor) and result.shape != x.shape and result.dtype == x.dtype \
                and result.requires_grad:
            single.add(name)
        elif isinstance(result, tuple) and all(isinstance(r, torch.Tensor) for r in result):
            several.add(name)
    return single, several


# -- grad_fn names and what ops save ---------------------------------------------------------


def binary_cases():
    """op key -> function of the first operand a and a second tensor b (used only
    by the *_tensor forms); a Python number as the other operand in *_scalar."""
    return {
        "add_tensor": lambda a, b: a + b, "add_scalar": lambda a, b: a + 2,
        "sub_tensor": lambda a, b: a - b, "sub_scalar": lambda a, b: a - 2,
        "mul_tensor": lambda a, b: a * b, "mul_scalar": lambda a, b: a * 2,
        "div_tensor": lambda a, b: a / b, "div_scalar": lambda a, b: a / 2,
        "pow_tensor": lambda a, b: a ** b, "pow_scalar": lambda a, b: a ** 2,
        "rpow_scalar": lambda a, b: 2 ** a, "rdiv_scalar": lambda a, b: 2 / a,
        "matmul_tensor": lambda a, b: a @ b.t(),
    }


def other_cases():
    """op key -> function of a (2, 3) float tensor; the op's grad_fn and what it saves."""
    return {
        "getitem": lambda a: a[0], "getitem_slice": lambda a: a[0:1],
        "getitem_index": lambda a: a[[0, 1]], "getitem_mask": lambda a: a[a > 0.5],
        "view": lambda a: a.view(6), "reshape": lambda a: a.reshape(6),
        "flatten": lambda a: a.flatten(), "squeeze": lambda a: a.squeeze(0),
        "unsqueeze": lambda a: a.unsqueeze(0), "transpose": lambda a: a.transpose(0, 1),
        "permute": lambda a: a.permute(1, 0), "t": lambda a: a.t(),
        "expand": lambda a: a.expand(2, 2, 3), "clone": lambda a: a.clone(),
        "contiguous": lambda a: a.t().contiguous(),
        "to": lambda a: a.to(torch.float64), "double": lambda a: a.double(),
        "half": lambda a: a.half(), "float": lambda a: a.double().float(),
        "cat": lambda a: torch.cat([a, a]), "stack": lambda a: torch.stack([a, a]),
        "sum": lambda a: a.sum(), "mean": lambda a: a.mean(),
        "sum_dim": lambda a: a.sum(1), "mean_dim": lambda a: a.mean(1),
        "max": lambda a: a.max(), "max_dim": lambda a: a.max(1)[0],
        "norm": lambda a: a.norm(), "prod": lambda a: a.prod(), "std": lambda a: a.std(),
        "var": lambda a: a.var(), "logsumexp_dim": lambda a: a.logsumexp(1),
        "softmax": lambda a: F.softmax(a, dim=-1), "log_softmax": lambda a: F.log_softmax(a, dim=-1),
        "relu": lambda a: F.relu(a), "sigmoid": lambda a: torch.sigmoid(a), "tanh": lambda a: torch.tanh(a),
    }


# Functions of tensors that give one differentiable tensor, tried on (2, 3) float
# tensors `a` and `b` that require grad: qualified name -> call.
DIFFERENTIABLE_CALLS = {
    "torch.dot": lambda a, b: torch.dot(a[0], b[0]),
    "torch.inner": lambda a, b: torch.inner(a, b),
    "torch.vdot": lambda a, b: torch.vdot(a[0], b[0]),
    "torch.outer": lambda a, b: torch.outer(a[0], b[0]),
    "torch.einsum": lambda a, b: torch.einsum("ij,ij->i", a, b),
    "torch.tensordot": lambda a, b: torch.tensordot(a, b, dims=2),
    "torch.where": lambda a, b: torch.where(a > 0, a, b),
    "torch.flip": lambda a, b: torch.flip(a, [0]),
    "torch.gather": lambda a, b: torch.gather(a, 1, torch.zeros(2, 1, dtype=torch.long)),
    "torch.diag": lambda a, b: torch.diag(a[0]),
    "torch.trace": lambda a, b: torch.trace(a[:, :2]),
    "torch.logsumexp": lambda a, b: torch.logsumexp(a, 1),
    "torch.linalg.norm": lambda a, b: torch.linalg.norm(a),
    "torch.linalg.vector_norm": lambda a, b: torch.linalg.vector_norm(a),
    "torch.linalg.matrix_norm": lambda a, b: torch.linalg.matrix_norm(a),
    "torch.linalg.svdvals": lambda a, b: torch.linalg.svdvals(a),
    "torch.linalg.pinv": lambda a, b: torch.linalg.pinv(a),
    # Square matrices made from `a` (positive definite where the function asks it).
    "torch.linalg.eigvalsh": lambda a, b: torch.linalg.eigvalsh(a @ a.t()),
    "torch.linalg.det": lambda a, b: torch.linalg.det(a[:, :2]),
    "torch.det": lambda a, b: torch.det(a[:, :2]),
    "torch.linalg.inv": lambda a, b: torch.linalg.inv(a @ a.t() + torch.eye(2)),
    "torch.inverse": lambda a, b: torch.inverse(a @ a.t() + torch.eye(2)),
    "torch.linalg.solve": lambda a, b: torch.linalg.solve(a @ a.t() + torch.eye(2), b),
    "torch.linalg.cholesky": lambda a, b: torch.linalg.cholesky(a @ a.t() + torch.eye(2)),
    "torch.logdet": lambda a, b: torch.logdet(a @ a.t() + torch.eye(2)),
    "torch.linalg.matrix_exp": lambda a, b: torch.linalg.matrix_exp(a[:, :2]),
    "torch.cross": lambda a, b: torch.cross(a[:, :3], b[:, :3], dim=1),
    "torch.cdist": lambda a, b: torch.cdist(a, b),
    "torch.kron": lambda a, b: torch.kron(a, b),
    "torch.lerp": lambda a, b: torch.lerp(a, b, 0.5),
    "torch.addmm": lambda a, b: torch.addmm(a[:, :2], a, b.t()),
    "torch.bmm": lambda a, b: torch.bmm(a[None], b.t()[None]),
    "torch.mm": lambda a, b: torch.mm(a, b.t()),
    "torch.mv": lambda a, b: torch.mv(a, b[0]),
    "torch.matmul": lambda a, b: torch.matmul(a, b.t()),
    "torch.cumsum": lambda a, b: torch.cumsum(a, 1),
    "torch.cumprod": lambda a, b: torch.cumprod(a, 1),
    "torch.diff": lambda a, b: torch.diff(a),
    "torch.narrow": lambda a, b: torch.narrow(a, 1, 0, 2),
    "torch.roll": lambda a, b: torch.roll(a, 1),
    "torch.index_select": lambda a, b: torch.index_select(a, 1, torch.tensor([0])),
    "torch.masked_fill": lambda a, b: torch.masked_fill(a, a > 0, 0.0),
    "torch.atan2": lambda a, b: torch.atan2(a, b),
    "torch.hypot": lambda a, b: torch.hypot(a, b),
    "torch.maximum": lambda a, b: torch.maximum(a, b),
    "torch.minimum": lambda a, b: torch.minimum(a, b),
    "torch.nn.functional.linear": lambda a, b: F.linear(a, b),
    "torch.nn.functional.cosine_similarity": lambda a, b: F.cosine_similarity(a, b),
    "torch.nn.functional.pairwise_distance": lambda a, b: F.pairwise_distance(a, b),
    "torch.nn.functional.normalize": lambda a, b: F.normalize(a),
    "torch.nn.functional.pad": lambda a, b: F.pad(a, (1, 1)),
    "torch.nn.functional.embedding": lambda a, b: F.embedding(torch.tensor([0, 1]), a),
    "torch.nn.functional.layer_norm": lambda a, b: F.layer_norm(a, (3,)),
    "torch.nn.functional.dropout": lambda a, b: F.dropout(a, 0.5),
}


def differentiable_functions() -> dict:
    """Qualified name -> grad_fn, for the calls above that give one tensor with a
    grad_fn; Tensor methods of the same name count too (see DIFFERENTIABLE_METHODS)."""
    found = {}
    for name, call in DIFFERENTIABLE_CALLS.items():
        a, b = leaf(), leaf()
        result = attempt(lambda: call(a, b))
        if isinstance(result, torch.Tensor) and result.grad_fn is not None:
            found[name] = type(result.grad_fn).__name__
    return found


def differentiable_methods(functions: dict) -> set:
    """Short names of those functions that are also Tensor methods."""
    return {name.rsplit(".", 1)[-1] for name in functions
            if name.startswith("torch.") and name.count(".") == 1
            and hasattr(torch.Tensor, name.rsplit(".", 1)[-1])}


# matmul by operand ranks: the grad_fn is picked by shapes.
MATMUL_SHAPES = {"1,1": ((3,), (3,)), "2,1": ((2, 3), (3,)), "1,2": ((3,), (3, 2)),
                 "2,2": ((2, 3), (3, 2)), "3,3": ((2, 2, 3), (2, 3, 2)), "3,2": ((2, 2, 3), (3, 2)),
                 "2,3": ((2, 3), (2, 3, 2)), "3,1": ((2, 2, 3), (3,)), "1,3": ((3,), (2, 3, 2))}


def arity_grad_fns() -> dict:
    """op -> operand signature (ranks, "s" for a Python number) -> grad_fn name."""
    table = {"matmul": {}}
    for key, (left, right) in MATMUL_SHAPES.items():
        table["matmul"][key] = grad_fn_of(leaf(left) @ leaf(right))
    ops = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: a / b, "pow": lambda a, b: a ** b}
    for op, fn in ops.items():
        table[op] = {"1,1": grad_fn_of(fn(leaf((3,)), leaf((3,)))),
                     "1,s": grad_fn_of(fn(leaf((3,)), 2)),
                     "s,1": grad_fn_of(fn(2, leaf((3,))))}
    return table


def saves(fn) -> tuple[bool, bool, bool]:
    """(saves its input, saves its output, saves nothing) for fn(a, b): a and b
    non-leaves made from leaves that require grad (a clone saves nothing itself)."""
    def run(modify):
        a, b = leaf().clone(), leaf().clone()
        y = fn(a, b)
        y = y[0] if isinstance(y, tuple) else y
        if modify == "input":
            a.add_(0)
        elif modify == "output":
            y.add_(0)
        total = y.sum()
        total.backward()
        if modify == "twice":
            total.backward()

    def raises(modify):
        result = attempt(lambda: run(modify))
        return failed(result) and MODIFIED_INPLACE in str(result)

    return raises("input"), raises("output"), not failed(attempt(lambda: run("twice")))


def saving_tables(elementwise) -> tuple[set, set, set, dict]:
    """Ops measured by saves(): (saving input, saving output, saving nothing, grad_fn names)."""
    saves_input, saves_output, saves_nothing, grad_fns = set(), set(), set(), {}
    cases = dict(binary_cases())
    cases.update({key: (lambda f: lambda a, b: f(a))(fn) for key, fn in other_cases().items()})
    for key, fn in elementwise.items():
        cases.setdefault(key, (lambda f: lambda a, b: f(a))(fn))
    for key, fn in sorted(cases.items()):
        y = attempt(lambda: fn(leaf().clone(), leaf().clone()))
        if failed(y):
            continue
        grad_fns[key] = grad_fn_of(y[0] if isinstance(y, tuple) else y)
        inp, out, nothing = saves(fn)
        if inp:
            saves_input.add(key)
        if out:
            saves_output.add(key)
        if nothing:
            saves_nothing.add(key)
    return saves_input, saves_output, saves_nothing, {k: v for k, v in grad_fns.items() if v}


def elementwise_callables(keeps) -> dict:
    """One runnable form per element-wise name, a function of one tensor: the
    method first, then torch.NAME, functional, special."""
    out = {}
    for space in ("special", "functional", "torch", "method"):
        for name, (fn, trial) in keeps[space].items():
            out[name] = (lambda f, t: lambda a: call(f, a, t))(fn, trial)
    return out


# -- losses, layers, optimizers ---------------------------------------------------------------


def loss_inputs(name: str, shape=(4, 3)):
    """Arguments for a functional loss or its nn class (input first, of `shape`: batch,
    classes, then any extra dims), or None."""
    x, y = leaf(shape), leaf(shape, requires_grad=False)
    # Class indices and +1/-1 targets have the input's shape without the class dim.
    per_sample = shape[:1] + shape[2:]
    labels = torch.arange(torch.Size(per_sample).numel()).remainder(shape[1]).reshape(per_sample)
    sign = torch.ones(per_sample).index_fill_(0, torch.arange(1, shape[0], 2), -1.0)
    table = {
        "mse_loss": (x, y), "l1_loss": (x, y), "smooth_l1_loss": (x, y), "huber_loss": (x, y),
        "binary_cross_entropy": (x, y), "binary_cross_entropy_with_logits": (x, y),
        "soft_margin_loss": (x, y), "multilabel_soft_margin_loss": (x, y),
        "kl_div": (x, y), "poisson_nll_loss": (x, y), "gaussian_nll_loss": (x, y, y),
        "cross_entropy": (x, labels), "nll_loss": (x, labels), "multi_margin_loss": (x, labels),
        "multilabel_margin_loss": (x, torch.zeros(shape, dtype=torch.long)),
        "hinge_embedding_loss": (x, torch.ones(shape)),
        "cosine_embedding_loss": (x, y, sign), "margin_ranking_loss": (x[:, 0], y[:, 0], sign),
        "triplet_margin_loss": (x, y, y), "triplet_margin_with_distance_loss": (x, y, y),
    }
    return table.get(name)


# nn class name -> functional loss name, for the classes whose name does not map mechanically.
LOSS_CLASS_TO_FUNCTION = {
    "MSELoss": "mse_loss", "L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss",
    "HuberLoss": "huber_loss", "BCELoss": "binary_cross_entropy",
    "BCEWithLogitsLoss": "binary_cross_entropy_with_logits", "SoftMarginLoss": "soft_margin_loss",
    "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss", "KLDivLoss": "kl_div",
    "PoissonNLLLoss": "poisson_nll_loss", "GaussianNLLLoss": "gaussian_nll_loss",
    "CrossEntropyLoss": "cross_entropy", "NLLLoss": "nll_loss", "MultiMarginLoss": "multi_margin_loss",
    "MultiLabelMarginLoss": "multilabel_margin_loss", "HingeEmbeddingLoss": "hinge_embedding_loss",
    "CosineEmbeddingLoss": "cosine_embedding_loss", "MarginRankingLoss": "margin_ranking_loss",
    "TripletMarginLoss": "triplet_margin_loss",
    "TripletMarginWithDistanceLoss": "triplet_margin_with_distance_loss",
}


def losses() -> tuple[dict, dict, dict]:
    """(nn loss class -> default reduction, functional loss -> default reduction,
    loss -> grad_fn of its result with the default reduction)."""
    classes, functions, grad_fns = {}, {}, {}
    for name, cls in vars(nn).items():
        if isinstance(cls, type) and issubclass(cls, nn.modules.loss._Loss) and not name.startswith("_"):
            instance = attempt(cls)
            if isinstance(instance, nn.Module):
                classes[name] = instance.reduction
    for name, function in LOSS_CLASS_TO_FUNCTION.items():
        args = loss_inputs(function)
        if name in classes and args is not None:
            result = attempt(lambda: getattr(nn, name)()(*args))
            grad_fns[name] = grad_fn_of(result)
    for name, fn in vars(F).items():
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        parameter = inspect.signature(fn).parameters.get("reduction")
        if parameter is not None and isinstance(parameter.default, str):
            functions[name] = parameter.default
            args = loss_inputs(name)
            if args is not None:
                result = attempt(lambda: fn(*args))
                if isinstance(result, torch.Tensor) and result.dim() == 0:
                    grad_fns[name] = grad_fn_of(result)
    return classes, functions, {k: v for k, v in grad_fns.items() if v}


CONTAINERS = ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Container")
# Constructor arguments tried in order; a class none of them builds is left out.
LAYER_ARGS = ((4, 4), (4,), (4, 4, 3), (), (2, 4))


def layers() -> tuple[set, set, set, set, set]:
    """(nn classes with parameters by default, without, activations saving their
    output, activations saving their input, classes with an `inplace` argument)."""
    with_params, without, saves_out, saves_in, inplace = set(), set(), set(), set(), set()
    for name, cls in sorted(vars(nn).items()):
        if not isinstance(cls, type) or not issubclass(cls, nn.Module) or name.startswith("_"):
            continue
        if "inplace" in inspect.signature(cls.__init__).parameters:
            inplace.add(name)
        if name in CONTAINERS or name == "Module" or issubclass(cls, nn.modules.loss._Loss):
            continue
        if "module" in inspect.signature(cls.__init__).parameters:
            continue  # a wrapper (DataParallel): its parameters are the wrapped module's
        for args in LAYER_ARGS:
            module = attempt(lambda: cls(*args))
            if isinstance(module, nn.Module):
                (with_params if any(True for _ in module.parameters()) else without).add(name)
                break
        if cls.__module__ == "torch.nn.modules.activation" and name in without:
            module = attempt(cls)
            if isinstance(module, nn.Module) and not getattr(module, "inplace", False):
                probe = attempt(lambda: saves(lambda a, b: module(a)))
                if isinstance(probe, tuple):
                    if probe[1]:
                        saves_out.add(name)
                    if probe[0]:
                        saves_in.add(name)
    return with_params, without, saves_out, saves_in, inplace


def containers() -> set:
    return {name for name in CONTAINERS if isinstance(getattr(nn, name, None), type)}


def optimizers() -> set:
    return {name for name, cls in vars(torch.optim).items()
            if isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)
            and cls is not torch.optim.Optimizer and not name.startswith("_")}


# -- nn layers as objects: constructors, parameter shapes, forwards ------------------------


def positional_names(signature: inspect.Signature) -> tuple:
    """Parameters that can be passed by position: not self, *args, **kwargs or keyword-only."""
    return tuple(p.name for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self")


def required_names(signature: inspect.Signature) -> tuple:
    positional = positional_names(signature)
    return tuple(p.name for p in signature.parameters.values()
                 if p.name in positional and p.default is p.empty)


def constructor_signature(cls) -> inspect.Signature:
    """The signature of cls.__init__. nn.LSTM, nn.GRU and nn.RNN take (*args, **kwargs)
    and hand them to RNNBase; for such a class, the first typing overload whose
    required arguments torch stores under their own names when the class is built."""
    signature = inspect.signature(cls.__init__)
    if positional_names(signature):
        return signature
    for overload in map(inspect.signature, typing.get_overloads(cls.__init__)):
        values = dict(zip(required_names(overload), PRIMES))
        module = attempt(lambda: cls(**values)) if values else None
        if isinstance(module, nn.Module) and all(getattr(module, k, None) == v for k, v in values.items()):
            return overload
    return signature


def constructor_params(names) -> dict:
    """nn class -> the names of the arguments its constructor takes by position, in order."""
    return {name: positional_names(constructor_signature(getattr(nn, name))) for name in names}


PRIMES = tuple(n for n in range(5, 400) if all(n % d for d in range(2, int(n ** 0.5) + 1)))
# Two sets of sizes for parameter shapes: a dimension means the same argument in both,
# or it means none.
PRIME_SETS = (PRIMES[0::2], PRIMES[1::2])
# Sizes for running layers: the smallest primes, none equal to the batch and other
# sizes of input_trials (2, 4, 6); int arguments stay ints (Conv3d's kernel 7, not
# (7, 11, 13)), so that the inputs stay small.
FORWARD_SIZES = (3,) + PRIMES
# Largest k tried for a dimension that is k times an argument (LSTM: 4 * hidden_size).
MAX_MULTIPLE = 8


class Sizes(typing.NamedTuple):
    """How a class is built to be measured: each argument in `varied` gets its own
    prime, taken in the order of `order` (default: `varied`); `multiple` = (a, b) makes
    a a multiple of b (torch wants embed_dim divisible by num_heads); each (name,
    length) in `tuples` gets a tuple of primes (Conv2d's kernel_size)."""
    varied: tuple
    multiple: tuple | None = None
    tuples: tuple = ()
    order: tuple | None = None

    def values(self, primes) -> tuple[dict, typing.Iterator[int]]:
        """(keyword arguments, the primes none of them uses)."""
        order = self.order or self.varied
        values = {name: primes[order.index(name)] for name in self.varied}
        if self.multiple and set(self.multiple) <= values.keys():
            values[self.multiple[0]] *= values[self.multiple[1]]
        unused = iter(primes[len(order):])
        for name, length in self.tuples:
            values[name] = (values[name],) + tuple(next(unused) for _ in range(length - 1))
        return values, unused


def build_sized(cls, sizes: Sizes, primes):
    values, _ = sizes.values(primes)
    return attempt(lambda: cls(**values))


def parameter_shapes(module) -> dict:
    """Parameter name -> shape; None for a lazy parameter not yet shaped by a forward."""
    return {name: None if nn.parameter.is_lazy(p) else tuple(p.shape)
            for name, p in module.named_parameters()}


@functools.lru_cache(maxsize=None)
def probe(cls, sizes: Sizes, primes) -> tuple | None:
    """(parameter shapes, the attributes named like the varied arguments) of cls built
    with `primes`, or None when torch refuses those sizes."""
    module = build_sized(cls, sizes, primes)
    if not isinstance(module, nn.Module):
        return None
    return parameter_shapes(module), {name: getattr(module, name, None) for name in sizes.varied}


def fitting(cls, sizes: Sizes, prime_sets=PRIME_SETS) -> Sizes | None:
    """`sizes`, or the same with one argument made a multiple of another, that builds
    with every prime set; None when none does."""
    pairs = [(a, b) for a in sizes.varied for b in sizes.varied if a != b]
    for trial in [sizes] + [sizes._replace(multiple=pair) for pair in pairs]:
        if all(probe(cls, trial, primes) is not None for primes in prime_sets):
            return trial
    return None


def sizes_for(cls) -> Sizes | None:
    """The sizes a class is measured with: its required arguments, and those optional
    int arguments that change a parameter's shape without changing which parameters
    there are (PReLU's num_parameters, not LSTM's num_layers) or without which it does
    not build; int arguments torch repeats into several dimensions become tuples."""
    signature = constructor_signature(cls)
    optional = tuple(p.name for p in signature.parameters.values()
                     if p.name in positional_names(signature) and type(p.default) is int)
    varied = required_names(signature) + optional
    # Choosing the arguments needs one set of sizes, the smallest (Transformer's layer
    # counts are among them); the final sizes must fit both prime sets.
    sizes = fitting(cls, Sizes(varied, order=varied), (FORWARD_SIZES,))
    # Optional arguments torch refuses as primes (groups must divide the channels) keep their default.
    while sizes is None and varied and varied[-1] in optional:
        varied = varied[:-1]
        sizes = fitting(cls, Sizes(varied, order=varied), (FORWARD_SIZES,)) if varied else None
    if sizes is None:
        return Sizes(()) if not varied and isinstance(attempt(cls), nn.Module) else None
    shapes, _ = probe(cls, sizes, FORWARD_SIZES)
    kept = []
    for name in sizes.varied:
        if name in optional:
            without = probe(cls, sizes._replace(varied=tuple(n for n in sizes.varied if n != name)),
                            FORWARD_SIZES)
            if without is not None and (without[0].keys() != shapes.keys() or without[0] == shapes):
                continue
        kept.append(name)
    sizes = fitting(cls, Sizes(tuple(kept)))
    if sizes is None:
        return None
    values, _ = sizes.values(PRIME_SETS[0])
    _, stored = probe(cls, sizes, PRIME_SETS[0])
    repeated = tuple((name, len(value)) for name, value in stored.items()
                     if isinstance(value, tuple) and len(value) > 1 and set(value) == {values[name]})
    return fitting(cls, sizes._replace(tuples=repeated)) if repeated else sizes


def input_trials(channels, pair=(), batch=2, others=(4, 6), span=8) -> list:
    """Inputs to try on a layer, simplest first, as (kind, shapes) with kind "float" or
    "index": one tensor whose channel dim (dim 1, or the last) is one of `channels`, in
    ranks 1 to 5, with spatial dims of `span`; long indices; two or three tensors of one
    such shape (attention, Transformer); tensors with the sizes of `pair` (Bilinear)."""
    single = [shape for c in channels for shape in
              ((c,), (batch, c), (batch, c, span), (batch, c, span, span), (batch, c, span, span, span),
               (batch, others[0], c), (batch, *others, c))]
    trials = [("float", (shape,)) for shape in single] + [("index", ((batch, others[0]),))]
    trials += [("float", (shape,) * count) for count in (2, 3) for shape in single]
    if pair:
        trials.append(("float", tuple((batch, size) for size in pair)))
    return trials


def make_inputs(kind: str, shapes: tuple) -> list:
    """Non-leaf inputs (an op's output, as a layer's input usually is): float ones require grad."""
    if kind == "index":
        return [torch.zeros(shape, dtype=torch.long).clone() for shape in shapes]
    return [leaf(shape).clone() for shape in shapes]


def shape_only_inputs(kind: str, shapes: tuple) -> list:
    """Inputs that have a shape and no storage of that size, for a lazy layer's
    initialize_parameters (it reads sizes only)."""
    dtype = torch.long if kind == "index" else torch.float32
    return [torch.zeros((), dtype=dtype).expand(shape) for shape in shapes]


def forwards(fn, trials, first_only=False, inputs=make_inputs) -> list:
    """(kind, shapes, output) for every trial fn accepts (or the first); the
    multi-input trials only when no single input works."""
    accepted = []
    for kind, shapes in trials:
        if accepted and (first_only or len(shapes) > 1):
            break
        output = attempt(lambda: fn(*inputs(kind, shapes)))
        if not failed(output):
            accepted.append((kind, shapes, output))
    return accepted


def dimension_candidates(size: int, values: dict) -> set:
    """What a parameter dimension of `size` may stand for, given the constructor's values."""
    found = {("const", size)}
    for name, value in values.items():
        if type(value) is int:
            if size == value:
                found.add(name)
            found |= {("*", k, name) for k in range(2, MAX_MULTIPLE + 1) if size == k * value}
        elif isinstance(value, tuple):
            found |= {(name, i) for i, item in enumerate(value) if item == size}
    return found


def dimension_spec(candidates: set):
    """The one meaning both prime sets agree on: an argument (or element, or multiple
    of one) over a constant; None when none or several remain."""
    named = [c for c in candidates if not (isinstance(c, tuple) and c[0] == "const")]
    if len(named) == 1:
        return named[0]
    if not named and len(candidates) == 1:
        return next(iter(candidates))[1]
    return None


def is_lazy(module) -> bool:
    return any(nn.parameter.is_lazy(p) for p in module.parameters())


def shaped_parameters(cls, sizes: Sizes, primes) -> tuple[dict, dict]:
    """(constructor values, parameter shapes) of cls built with `primes`. A lazy layer
    takes its missing sizes from its first input: it is given one whose every dim is a
    prime no argument has, so that those sizes differ between the prime sets."""
    values, unused = sizes.values(primes)
    shapes, _ = probe(cls, sizes, primes)
    if None not in shapes.values():
        return values, shapes
    module = build_sized(cls, sizes, primes)
    channel, batch, first, second, span = (next(unused) for _ in range(5))
    forwards(module.initialize_parameters, input_trials([channel], (), batch, (first, second), span),
             first_only=True, inputs=shape_only_inputs)
    return values, parameter_shapes(module)


def layer_forwards(cls, sizes: Sizes) -> tuple:
    """(module built with FORWARD_SIZES, the input_trials it accepts). Channels are
    the first two size arguments or a size no argument has (only that one for a lazy
    layer: it takes its sizes from its first input); spatial dims are even and larger
    than every argument."""
    sizes = sizes._replace(tuples=())
    values, unused = sizes.values(FORWARD_SIZES)
    module = build_sized(cls, sizes, FORWARD_SIZES)
    if not isinstance(module, nn.Module):
        return None, []
    ints = [v for v in values.values() if type(v) is int]
    fresh = next(unused)
    channels = [fresh] if is_lazy(module) else list(dict.fromkeys(ints[:2] + [fresh]))
    span = max(FORWARD_SIZES[:len(sizes.varied)], default=4) // 2 * 2 + 4
    return module, forwards(module, input_trials(channels, tuple(ints[:2]) if len(ints) >= 2 else (),
                                                 span=span))


def param_shape_specs(cls, sizes: Sizes) -> dict | None:
    """Parameter -> one spec per dimension (see NN_PARAM_SHAPES), from both prime sets;
    None when a set leaves a parameter unshaped or the sets disagree on the names."""
    (values_a, shapes_a), (values_b, shapes_b) = (shaped_parameters(cls, sizes, primes)
                                                  for primes in PRIME_SETS)
    if shapes_a.keys() != shapes_b.keys() or None in shapes_a.values() or None in shapes_b.values():
        return None
    specs = {}
    for name, shape in shapes_a.items():
        if len(shape) != len(shapes_b[name]):
            return None
        specs[name] = tuple(dimension_spec(dimension_candidates(a, values_a) & dimension_candidates(b, values_b))
                            for a, b in zip(shape, shapes_b[name]))
    return specs


def saves_layer_input(module, kind: str, shapes: tuple) -> bool:
    """Whether backward through module(inputs) raises once the first input is changed
    in place after the forward (and works when it is not)."""
    def run(modify):
        inputs = make_inputs(kind, shapes)
        output = module(*inputs)
        while isinstance(output, tuple):
            output = output[0]
        if modify:
            inputs[0].add_(0)
        output.sum().backward()

    result = attempt(lambda: run(True))
    return not failed(attempt(lambda: run(False))) and failed(result) and MODIFIED_INPLACE in str(result)


def layer_objects(with_params: set, without: set) -> tuple[dict, set, set, set]:
    """(parameter shape specs, shape-preserving classes, classes returning a tuple,
    classes with parameters whose backward needs their input). The last three come
    from the inputs of input_trials a layer built with FORWARD_SIZES accepts: shape
    preserving when every single float input it takes keeps its shape, a tuple when
    every accepted call returns one, saving its input when backward through its first
    accepted call fails once that input is changed in place."""
    specs, preserving, returns_tuple, saving = {}, set(), set(), set()
    for name in sorted(with_params | without):
        cls = getattr(nn, name)
        sizes = sizes_for(cls)
        if sizes is None:
            continue
        if name in with_params:
            found = param_shape_specs(cls, sizes)
            if found is not None:
                specs[name] = found
        module, accepted = layer_forwards(cls, sizes)
        if not accepted:
            continue
        single = [(shapes[0], out) for kind, shapes, out in accepted if kind == "float" and len(shapes) == 1]
        if single and all(isinstance(out, torch.Tensor) and tuple(out.shape) == shape for shape, out in single):
            preserving.add(name)
        if all(isinstance(out, tuple) for _, _, out in accepted):
            returns_tuple.add(name)
        if name in with_params and saves_layer_input(module, *accepted[0][:2]):
            saving.add(name)
    return specs, preserving, returns_tuple, saving


# Input shapes of a loss: (batch, classes), another (batch, classes), and with an extra dim.
LOSS_SHAPES = ((4, 3), (5, 2), (4, 3, 2))


def unreduced_loss_shapes(functional: dict) -> dict:
    """Loss (nn class or functional name) -> "input" when reduction="none" gives the
    input's shape, "drop_class_dim" when it gives the input's shape without dim 1; on
    every shape of LOSS_SHAPES the loss takes, at least two. Losses fitting neither are
    left out."""
    calls = {name: (name, lambda *a, f=getattr(F, name): f(*a, reduction="none")) for name in functional}
    calls.update({cls: (function, lambda *a, c=getattr(nn, cls): c(reduction="none")(*a))
                  for cls, function in LOSS_CLASS_TO_FUNCTION.items()})
    out = {}
    for name, (function, fn) in sorted(calls.items()):
        verdicts = []
        for shape in LOSS_SHAPES:
            args = loss_inputs(function, shape)
            result = attempt(lambda: fn(*args)) if args is not None else None
            if isinstance(result, torch.Tensor):
                first = tuple(args[0].shape)
                verdicts.append({kind for kind, expected in
                                 (("input", first), ("drop_class_dim", first[:1] + first[2:]))
                                 if tuple(result.shape) == expected})
        agreed = set.intersection(*verdicts) if len(verdicts) >= 2 else set()
        if len(agreed) == 1:
            out[name] = agreed.pop()
    return out


# -- qualified names of autograd helpers ---------------------------------------------------

NAME_MODULES = ("torch", "torch.autograd", "torch.autograd.grad_mode", "torch.autograd.gradcheck",
                "torch.autograd.variable")


def qualified_names(*targets) -> set:
    """Every `module.attr` in NAME_MODULES that is one of `targets`."""
    found = set()
    for module_name in NAME_MODULES:
        module = sys.modules.get(module_name)
        for attr in dir(module):
            if not attr.startswith("_") and any(getattr(module, attr) is t for t in targets):
                found.add(f"{module_name}.{attr}")
    return found


# -- writing -----------------------------------------------------------------------------


def literal(value, indent=0) -> str:
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{k!r}: {literal(v, indent + 4)}," for k, v in sorted(value.items())]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, (set, frozenset)):
        if not value:
            return "frozenset()"
        lines, line = [], pad
        for item in sorted(value):
            piece = f"{item!r}, "
            if len(line) + len(piece) > 92 and line.strip():
                lines.append(line.rstrip())
                line = pad
            line += piece
        lines.append(line.rstrip())
        return "{\n" + "\n".join(lines) + "\n" + " " * indent + "}"
    return repr(value)


def build() -> str:
    """The text of analysis/torch_tables.py. Measured under torch's defaults even
    when the caller (a test session) changed them."""
    saved = (torch.get_default_dtype(), torch.is_grad_enabled(), torch.is_anomaly_enabled(),
             torch.get_num_threads())
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.set_anomaly_enabled(False)
    # Tiny tensors gain nothing from threads, and on a busy machine every op would wait
    # for its threads to be scheduled (a Transformer forward: 4 s instead of 0.07 s).
    torch.set_num_threads(1)
    try:
        return _build()
    finally:
        torch.set_default_dtype(saved[0])
        torch.set_grad_enabled(saved[1])
        torch.set_anomaly_enabled(saved[2])
        torch.set_num_threads(saved[3])


def _build() -> str:
    torch.manual_seed(0)
    forms = call_forms()
    keeps, elementwise, reductions, unary_grad_fns, reduction_dtypes = shape_ops_tables(forms)
    accepts_dim, dim_pairs, dim_grad_fns = reductions_with_dim(reductions | DIM_ONLY_CANDIDATES)
    default, by_kind, accepts_rg, data, like, copies, data_factories = factories()
    inplace, allowed_on_leaf, not_inplace, unverified = inplace_methods()
    op_inplace, op_rebinding = inplace_operators()
    saves_input, saves_output, saves_nothing, op_grad_fns = saving_tables(elementwise_callables(keeps))
    nn_losses, functional_losses, loss_grad_fns = losses()
    with_params, without, act_out, act_in, inplace_capable = layers()
    param_shapes, preserving, returns_tuple, saving_input = layer_objects(with_params, without)
    constructed = sorted(with_params | without | set(nn_losses) | containers())
    # The element-wise ops' names were measured on every shape; one shape gave op_grad_fns.
    op_grad_fns = {k: v for k, v in op_grad_fns.items() if k not in elementwise | reductions}
    grad_fns = {**unary_grad_fns, **dim_grad_fns, **op_grad_fns, **loss_grad_fns, **DOCUMENTED_GRAD_FN}
    single_shape_ops, tuple_shape_ops = shape_ops()
    differentiable = differentiable_functions()
    tables = {
        "DTYPES": ("qualified dtype name -> dtype", dtypes()),
        "DTYPE_METHODS": ("Tensor method named after a dtype -> the dtype it gives", dtype_methods()),
        "FACTORY_DTYPES": ("factory -> default dtype (None: by argument kind, see FACTORY_DTYPES_BY_KIND)",
                           default),
        "FACTORY_DTYPES_BY_KIND": ("factory -> kind of the deciding argument -> dtype", by_kind),
        "LIKE_FACTORIES": ("factories that copy shape and dtype from a tensor argument", like),
        "DATA_FACTORIES": ("factories whose first argument is data", data_factories),
        "DATA_DTYPES": ("kind of the data given to torch.tensor -> dtype", data),
        "DATA_FACTORIES_CUTTING_GRAPH": ("data factories whose result from a graph tensor has no grad",
                                         copies),
        "ACCEPTS_REQUIRES_GRAD": ("factories that take requires_grad=", accepts_rg),
        "LEAF_CONVERSIONS": ("method on a float32 leaf -> 'new' non-leaf, or the "
                             "'same_if_unchanged' tensor when dtype and device stay",
                             {**leaf_conversions(), **DOCUMENTED_CONVERSIONS}),
        "DOCUMENTED_NOT_MEASURED": ("entries taken from torch's documentation, not measured here",
                                    {f"LEAF_CONVERSIONS.{k}" for k in DOCUMENTED_CONVERSIONS}
                                    | {f"GRAD_FN.{k}" for k in DOCUMENTED_GRAD_FN}
                                    | {f"SAVES_NOTHING.{k}" for k in DOCUMENTED_SAVES_NOTHING}),
        "INPLACE_METHODS": ("Tensor methods that modify data in place (refused on a leaf requiring grad)",
                            inplace),
        "INPLACE_ALLOWED_ON_LEAF": ("in-place methods torch runs on a leaf requiring grad "
                                    "(their result is not differentiable)", allowed_on_leaf),
        "NOT_INPLACE_UNDERSCORE": ("Tensor methods ending in _ that change neither data nor version",
                                   not_inplace),
        "UNVERIFIED_UNDERSCORE": ("Tensor methods ending in _ that no trial call reached", unverified),
        "INPLACE_OPERATORS": ("augmented assignments that modify a tensor in place", op_inplace),
        "REBINDING_OPERATORS": ("augmented assignments that make a new tensor", op_rebinding),
        "ELEMENTWISE_METHODS": ("Tensor methods keeping shape and dtype, differentiable",
                                set(keeps["method"])),
        "ELEMENTWISE_TORCH": ("torch.NAME keeping shape and dtype", set(keeps["torch"])),
        "ELEMENTWISE_FUNCTIONAL": ("torch.nn.functional.NAME keeping shape and dtype", set(keeps["functional"])),
        "ELEMENTWISE_SPECIAL": ("torch.special.NAME keeping shape and dtype", set(keeps["special"])),
        "ELEMENTWISE": ("names keeping shape wherever they exist and changing it nowhere", elementwise),
        "REDUCTIONS": ("names giving a 0-dim tensor when called without dim", reductions),
        "REDUCTION_DTYPES": ("reductions whose result on float32 is not float32 (not differentiable)",
                             reduction_dtypes),
        "REDUCTIONS_WITH_DIM": ("reductions that take dim= and drop that dim", accepts_dim),
        "INDEX_RESULTS": ("functions computing indices or counts -> their integer dtype "
                          "(bincount: without weights)", index_results()),
        "REDUCTIONS_DIM_RETURNS_PAIR": ("reductions returning (values, indices) when given dim",
                                        dim_pairs),
        "SHAPE_OPS": ("methods giving one tensor of another shape", single_shape_ops),
        "SHAPE_OPS_RETURNING_TUPLE": ("shape methods giving a tuple of tensors", tuple_shape_ops),
        "GRAD_FN": ("op -> grad_fn class name of its result", grad_fns),
        "DIFFERENTIABLE_FUNCTIONS": ("functions giving one differentiable tensor -> its grad_fn",
                                     differentiable),
        "DIFFERENTIABLE_METHODS": ("Tensor methods named like those functions",
                                   differentiable_methods(differentiable)),
        "GRAD_FN_BY_OPERANDS": ("op -> operand ranks ('s': a Python number) -> grad_fn", arity_grad_fns()),
        "SAVES_INPUT": ("ops that fail backward when their input is modified in place", saves_input),
        "SAVES_OUTPUT": ("ops that fail backward when their output is modified in place", saves_output),
        "SAVES_NOTHING": ("ops that a second backward passes through without retain_graph",
                          saves_nothing | DOCUMENTED_SAVES_NOTHING),
        "MEASURED_OPS": ("every op key the saving tables measured", set(op_grad_fns) | saves_nothing
                         | saves_input | saves_output),
        "NN_LOSS_REDUCTION": ("torch.nn loss class -> default reduction", nn_losses),
        "FUNCTIONAL_LOSS_REDUCTION": ("torch.nn.functional loss -> default reduction", functional_losses),
        "NN_LAYERS_WITH_PARAMS": ("torch.nn classes with parameters when built with small arguments",
                                  with_params),
        "NN_LAYERS_WITHOUT_PARAMS": ("torch.nn classes without parameters", without),
        "NN_CONTAINERS": ("torch.nn containers", containers()),
        "NN_ACTIVATIONS_SAVING_OUTPUT": ("torch.nn activations whose forward saves its output", act_out),
        "NN_ACTIVATIONS_SAVING_INPUT": ("torch.nn activations whose forward saves its input", act_in),
        "NN_INPLACE_CAPABLE": ("torch.nn classes with an inplace argument", inplace_capable),
        "NN_CONSTRUCTOR_PARAMS": ("torch.nn class -> its constructor's positional parameters, in order",
                                  constructor_params(constructed)),
        "NN_PARAM_SHAPES": ("torch.nn class -> parameter -> per dim: the constructor argument it equals "
                            "(str), element i of a\ntuple argument ((name, i); an int argument stands "
                            "for all its elements), k times an argument\n(('*', k, name)), a constant "
                            "(int), or None (taken from the input, or from several arguments)",
                            param_shapes),
        "NN_SHAPE_PRESERVING": ("torch.nn classes whose output has the shape of the input, on every input "
                                "tried that they take", preserving),
        "NN_RETURNS_TUPLE": ("torch.nn classes whose forward returns a tuple", returns_tuple),
        "NN_LAYERS_SAVING_INPUT": ("torch.nn classes with parameters whose backward fails when their "
                                   "input is modified in place", saving_input),
        "LOSS_UNREDUCED_SHAPE": ("loss -> shape of its reduction='none' result: 'input' (the input's), or "
                                 "'drop_class_dim'\n(the input's without dim 1)",
                                 unreduced_loss_shapes(functional_losses)),
        "OPTIMIZERS": ("torch.optim optimizer classes", optimizers()),
        "GRAD_CHECKERS": ("qualified names of gradcheck and gradgradcheck",
                          qualified_names(torch.autograd.gradcheck, torch.autograd.gradgradcheck)),
        "NO_GRAD_CONTEXTS": ("qualified names of no_grad and inference_mode",
                             qualified_names(torch.no_grad, torch.inference_mode)),
        "ENABLE_GRAD_CONTEXTS": ("qualified names of enable_grad", qualified_names(torch.enable_grad)),
        "SET_GRAD_ENABLED": ("qualified names of set_grad_enabled", qualified_names(torch.set_grad_enabled)),
        "VARIABLE_CLASSES": ("qualified names of Variable, the tensor wrapper of torch < 0.4",
                             qualified_names(torch.autograd.Variable)),
    }
    parts = [
        '"""What torch\'s API does, measured on tiny tensors. Generated: do not edit.\n\n'
        f"Written by tools/generate_torch_tables.py from torch {torch.__version__};\n"
        "tests/test_torch_tables.py fails when the installed torch measures differently.\n"
        '"""\n',
    ]
    for name, (doc, value) in tables.items():
        comment = doc.replace("\n", "\n# ")
        parts.append(f"# {comment}\n{name} = {literal(value)}\n")
    return "\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff if the file would change")
    args = parser.parse_args(argv)
    text = build()
    old = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    if args.check:
        if text != old:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       str(OUT), "generated"))
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
