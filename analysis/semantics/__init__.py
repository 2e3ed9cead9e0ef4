"""What torch (and the few other libraries training code leans on) does, as
transfer functions: given the abstract values a call receives, the value it
returns and what it changes in the State.

The walker (analysis/walker.py) knows Python and nothing of torch; it hands
every call it cannot follow into the analysed code to `dispatch`, which finds
the transfer function by qualified name (`torch.nn.functional.mse_loss`), by
the kind of the receiver and the method name (`Tensor.sum`, `Module.eval`,
`Optimizer.step`, `list.append`), or by builtin name (`range`, `zip`). Each
family lives in its own module and registers itself here; the facts they use
come from `analysis/torch_api.py`, measured from torch.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autograd_lsp.analysis.facts import (UNKNOWN, GradAttr, NumberValue, ObjectRef, StrValue, TensorFacts,
                            Tri, TupleValue, Unknown, Value)

# qualname -> fn(call) for torch functions and classes (and other libraries' names).
FUNCTIONS: dict = {}
# (receiver kind, method name) -> fn(call); kinds: "tensor", "grad", "module",
# "optimizer", "list", "dict", "loader", "str", "number", "tuple", "any".
METHODS: dict = {}
# builtin name -> fn(call)
BUILTINS: dict = {}
# qualname prefix -> fn(call, qualname) for families named by pattern (`torch.nn.<Layer>`).
PREFIXES: list = []


def function(*qualnames):
    def register(fn):
        for name in qualnames:
            FUNCTIONS[name] = fn
        return fn
    return register


def method(kind, *names):
    def register(fn):
        for name in names:
            METHODS[(kind, name)] = fn
        return fn
    return register


def builtin(*names):
    def register(fn):
        for name in names:
            BUILTINS[name] = fn
        return fn
    return register


_MISSING = object()


@dataclass
class Call:
    """One call as a transfer function sees it."""
    node: ast.Call | None
    args: list
    kwargs: dict
    state: object                    # analysis.state.State, changed in place
    ctx: object                      # analysis.trace.Context
    walker: object                   # analysis.walker.Walker (ids, tensors, nested calls)
    frame: object
    receiver: Value | None = None
    qualname: str | None = None
    method: str | None = None
    # Whether a `*args` or `**kwargs` hides arguments.
    starred: bool = False
    # The values spread by `*args` whose items are not known (`zip(*batch)`).
    spread: tuple = ()
    extra: dict = field(default_factory=dict)
    # Distinguishes the identities of what calls made for one node make (the layers
    # of an nn.Sequential run by one `model(x)`).
    salt: tuple = ()

    # -- arguments ---------------------------------------------------------------------

    def arg(self, position: int | None, keyword: str | None = None, default=UNKNOWN):
        if keyword is not None and keyword in self.kwargs:
            return self.kwargs[keyword]
        if position is not None and position < len(self.args):
            return self.args[position]
        return UNKNOWN if self.starred else default

    def given(self, position: int | None, keyword: str | None = None) -> bool:
        return (keyword is not None and keyword in self.kwargs) or \
            (position is not None and position < len(self.args)) or self.starred

    def flag(self, position: int | None, keyword: str | None, default: Tri) -> Tri:
        """A bool argument: its value when known, `default` when absent, None otherwise."""
        value = self.arg(position, keyword, _MISSING)
        if value is _MISSING:
            return default
        return truth(value)

    def text(self, position: int | None, keyword: str | None, default: str | None = None):
        value = self.arg(position, keyword, _MISSING)
        if value is _MISSING:
            return default
        return value.value if isinstance(value, StrValue) else None

    def number(self, position: int | None, keyword: str | None = None, default=None):
        value = self.arg(position, keyword, _MISSING)
        if value is _MISSING:
            return default
        if isinstance(value, NumberValue) and isinstance(value.value, (int, float)) \
                and not isinstance(value.value, bool):
            return value.value
        return None

    def tensors(self) -> list:
        return [v for v in (*self.args, *self.kwargs.values()) if isinstance(v, TensorFacts)]

    # -- what transfer functions build with -----------------------------------------------

    def new_id(self, part: int | None = None):
        """An identity for something this call makes; several things made by one
        call get distinct parts (numbered in the order they are made when not given)."""
        if part is None:
            self._parts = getattr(self, "_parts", 999) + 1
            part = self._parts
        if self.salt:
            part = (self.salt, part)
        # One allocation site is one identity on every pass of a loop (so that passes
        # reach a fixpoint), except in a loop unrolled over a known collection, where
        # each pass is its own element: `{n: Adam(...) for n in ("D", "G")}` makes two
        # optimizers, not one overwritten by the next.
        passes = tuple(p for loop, p in zip(self.ctx.loops, self.ctx.passes) if loop.unrolled) \
            if self.ctx.loops else ()
        if passes:
            part = ("pass", passes, part)
        return self.walker.new_id(self.frame, self.node, part)


def truth(value) -> Tri:
    """Python truthiness of a value, when known."""
    from autograd_lsp.analysis.facts import NONE, FunctionValue, BoundMethod, ClassValue
    if isinstance(value, NumberValue):
        return None if value.value is None else bool(value.value)
    if value is NONE:
        return False
    if isinstance(value, StrValue):
        return None if value.value is None else bool(value.value)
    if isinstance(value, TupleValue):
        return bool(value.items)
    if isinstance(value, (FunctionValue, BoundMethod, ClassValue)):
        return True
    if isinstance(value, ObjectRef) and value.kind in ("module", "optimizer", "loader"):
        return True
    return None


def truth_in(state, value) -> Tri:
    """`truth`, and that of a list or dict whose emptiness the state knows (a replay
    memory tested with `if memory:`)."""
    known = truth(value)
    if known is not None or not isinstance(value, ObjectRef) or value.kind not in ("list", "dict"):
        return known
    attrs = state.attrs(value)
    items = attrs.get("items") if value.kind == "list" else attrs.get("entries")
    if isinstance(items, (tuple, dict)):
        return bool(items)
    nonempty = attrs.get("nonempty")
    return nonempty if isinstance(nonempty, bool) else None


def kind_of(value) -> str:
    """The receiver kind METHODS is keyed by."""
    if isinstance(value, TensorFacts):
        return "tensor"
    if isinstance(value, GradAttr):
        return "grad"
    if isinstance(value, ObjectRef):
        return value.kind
    if isinstance(value, StrValue):
        return "str"
    if isinstance(value, NumberValue):
        return "number"
    if isinstance(value, TupleValue):
        return "tuple"
    from autograd_lsp.analysis.semantics.external import NdArray
    if isinstance(value, NdArray):
        return "ndarray"
    from autograd_lsp.analysis.facts import ClassValue
    if isinstance(value, ClassValue):
        return "class"
    return "any"


def find_method(value, name: str):
    fn = METHODS.get((kind_of(value), name))
    if fn is None:
        fn = METHODS.get(("any", name))
    return fn


def find_function(qualname: str):
    fn = FUNCTIONS.get(qualname)
    if fn is not None:
        return fn
    for prefix, family in PREFIXES:
        if qualname.startswith(prefix):
            found = family(qualname)
            if found is not None:
                return found
    return None


def _load() -> None:
    # The families register themselves on import.
    from autograd_lsp.analysis.semantics import (autograd, builtins, containers,  # noqa: F401
                                                 custom_functions, data, distributions, external,
                                                 library_models, nn, optim, options, tensors)


_load()

__all__ = ["Call", "FUNCTIONS", "METHODS", "BUILTINS", "function", "method", "builtin",
           "find_method", "find_function", "truth", "kind_of", "UNKNOWN", "Unknown"]
