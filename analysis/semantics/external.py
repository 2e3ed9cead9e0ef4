"""The few names of other libraries that training code runs its tensors
through: NumPy conversions, `copy.deepcopy` of models, progress bars that pass
their iterable on, `itertools.chain` of parameter lists, `math` numbers."""
from __future__ import annotations

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, BuiltinName, ExternalName, NamedTupleType, NumberValue, ObjectRef,
                            Partial, StrValue, TensorFacts, TupleValue, Unknown, join_all, replace)
from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.semantics import PREFIXES, Call, function, method


@record
class NdArray:
    """A NumPy array. `converted` is a tensor that requires grad among those NumPy
    converted to make it (the conversion raises), if any."""
    shape: object = None
    converted: object = None
    dtype: str | None = None


def ndarray_of(call: Call, t: TensorFacts):
    return NdArray(t.shape, dtype=t.dtype)


# NumPy functions making float64 arrays by default (and the same methods of a
# `numpy.random.Generator`).
# Ufuncs whose result on a float64 input (a Python float) is float64.
_FLOAT_MATH = frozenset({"numpy." + n for n in (
    "log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "arcsin", "arccos", "arctan")})
_FLOAT64 = frozenset({"zeros", "ones", "empty", "full", "linspace", "rand", "randn", "random",
                      "normal", "uniform", "standard_normal", "random_sample", "eye", "identity"})
# Those making integer arrays: NumPy's default integer (int64 on Linux and macOS,
# and everywhere since NumPy 2).
_INT64 = frozenset({"randint", "integers", "argmax", "argmin", "argsort", "searchsorted"})


# NumPy functions that convert every tensor they are given with `__array__`
# (`Tensor.numpy()`), which raises on a tensor that requires grad.
NUMPY_CONVERTING = frozenset({
    "numpy.array", "numpy.asarray", "numpy.stack", "numpy.concatenate", "numpy.vstack",
    "numpy.hstack", "numpy.sum", "numpy.mean", "numpy.std", "numpy.var", "numpy.max", "numpy.min",
    "numpy.median", "numpy.average", "numpy.argmax", "numpy.argmin", "numpy.prod", "numpy.cumsum",
})

# Of those that take an array, the ones that convert a lone tensor too (a reduction
# like `numpy.mean(t)` calls the tensor's own method instead). Each is proven by
# tests/test_numpy_conversions.py, with torch and NumPy.
NUMPY_CONVERTING_TENSOR = frozenset({"numpy." + n for n in (
    "array", "asarray", "asanyarray", "copy", "ravel", "transpose", "percentile", "quantile",
    "sort", "argsort", "unique", "isnan", "isfinite", "nan_to_num", "diff", "cumprod", "ptp",
    "trace", "corrcoef", "cov", "atleast_1d", "atleast_2d", "expand_dims", "count_nonzero",
    "allclose", "isclose", "dot", "outer", "where", "histogram", "flatnonzero", "linalg.norm")})
NUMPY_CONVERTING = NUMPY_CONVERTING | NUMPY_CONVERTING_TENSOR


# NumPy ufuncs: they convert any tensor they are given with `__array__`.
NUMPY_UFUNCS = frozenset({"numpy." + n for n in (
    "log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "square", "abs", "absolute", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "sign", "floor", "ceil",
    "round", "clip", "maximum", "minimum", "power", "add", "subtract", "multiply", "divide")})
# Constants NumPy, math and torch name (`torch.pi` is a Python float, not a tensor).
CONSTANTS = {"numpy.pi": 3.141592653589793, "numpy.e": 2.718281828459045, "math.pi": 3.141592653589793,
             "math.e": 2.718281828459045, "math.tau": 6.283185307179586, "numpy.inf": float("inf"),
             "math.inf": float("inf"), "torch.pi": 3.141592653589793, "torch.e": 2.718281828459045,
             "torch.inf": float("inf")}


def constant(qualname: str):
    """The number a library constant stands for, or None."""
    value = CONSTANTS.get(qualname)
    return NumberValue("float", value) if value is not None else None


def _numpy_family(qualname: str):
    name = qualname.split(".", 1)[1] if "." in qualname else ""
    if not name:
        return None
    if name in ("pi", "e", "inf", "nan", "float32", "float64", "int64", "int32"):
        return _numpy_constant
    return _numpy_function


# NumPy's dtypes, by their names in `numpy` and as strings, as torch names them.
NUMPY_DTYPES = {name: name for name in ("float16", "float32", "float64", "int8", "int16", "int32",
                                         "int64", "uint8", "complex64", "complex128")}
NUMPY_DTYPES.update({"bool_": "bool", "bool": "bool", "double": "float64", "single": "float32",
                     "half": "float16", "longlong": "int64"})


def numpy_dtype(value) -> str | None:
    """The dtype `np.int64`, `"int64"` (or `torch.int64`) names, when known."""
    if isinstance(value, ExternalName) and value.qualname.startswith("numpy."):
        return NUMPY_DTYPES.get(value.qualname.split(".", 1)[1])
    if isinstance(value, StrValue) and value.value is not None:
        return NUMPY_DTYPES.get(value.value)
    return None


def _numpy_function(call: Call):
    if call.qualname in NUMPY_UFUNCS and call.qualname in _FLOAT_MATH and not call.kwargs:
        first = call.arg(0)
        if isinstance(first, NumberValue) and first.kind == "float" \
                or isinstance(first, NdArray) and first.dtype == "float64":
            # `np.log(cfg.init_alpha)`: a float64 scalar or array, like its input.
            return NdArray(getattr(first, "shape", ()), dtype="float64")
    if call.qualname in NUMPY_UFUNCS and len(call.args) == 1 and not call.kwargs \
            and isinstance(call.args[0], NdArray):
        return NdArray(call.args[0].shape, dtype=_float_of(call.args[0].dtype))
    if call.qualname in NUMPY_CONVERTING or call.qualname in NUMPY_UFUNCS:
        dtype = None
        if call.qualname in ("numpy.array", "numpy.asarray"):
            dtype = numpy_dtype(call.kwargs["dtype"]) if "dtype" in call.kwargs \
                else _literal_dtype(call.state, call.arg(0, "object"))
        return NdArray(converted=_graph_tensor(call), dtype=dtype)
    name = call.qualname.rsplit(".", 1)[-1]
    if name == "default_rng" or name == "RandomState":
        return ExternalName("numpy.random.Generator")
    shape = _made_shape(call, name)
    if "dtype" in call.kwargs:
        return NdArray(shape, dtype=numpy_dtype(call.kwargs["dtype"]))
    if name in _FLOAT64:
        return NdArray(shape, dtype="float64")
    if name in _INT64 or (name == "bincount" and not call.given(1, "weights")) \
            or (name == "choice" and isinstance(call.arg(0, "a"), NumberValue) and call.arg(0, "a").kind == "int"):
        # (Counts; a choice among `range(n)`, `rng.choice(5, size=n)`.)
        return NdArray(shape, dtype="int64")
    return NdArray(shape)


def _float_of(dtype):
    """A float ufunc's result dtype on an array of `dtype` (ints become float64)."""
    return dtype if dtype in _FLOATS else "float64" if dtype == "int64" else None


def _made_shape(call: Call, name: str):
    """The shape of an array a NumPy function makes from sizes (`np.zeros((n, 1))`,
    `np.random.randn(64, 1)`, `np.linspace(-3, 3, 64)`), or None."""
    if call.starred:
        return None
    if name == "linspace":
        num = call.number(2, "num", 50)
        return (num,) if isinstance(num, int) else None
    if name == "arange" and len(call.args) == 1 and not call.kwargs:
        n = call.number(0)
        return (max(n, 0),) if isinstance(n, int) else None
    if name in ("zeros", "ones", "empty", "full"):
        return _sizes(call, call.arg(0, "shape"))
    if name in ("rand", "randn"):
        dims = [call.number(i) for i in range(len(call.args))]
        return tuple(dims) if all(isinstance(d, int) for d in dims) and not call.kwargs else None
    if name in ("normal", "uniform", "standard_normal", "random", "random_sample", "randint", "integers"):
        return _sizes(call, call.kwargs["size"]) if "size" in call.kwargs else None
    return None


def _sizes(call: Call, value):
    """`n` or `(n, m)` as a shape, or None."""
    if isinstance(value, NumberValue) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return (value.value,)
    if isinstance(value, TupleValue):
        dims = [v.value if isinstance(v, NumberValue) and isinstance(v.value, int) else None
                for v in (call.state.fresh(i) for i in value.items)]
        return tuple(dims) if all(isinstance(d, int) for d in dims) else None
    return None


@method("ndarray", "reshape")
def _reshape(call: Call):
    """`a.reshape(-1, 1)`, `a.reshape((n, 1))`: NumPy's reshape, as torch's view."""
    from autograd_lsp.analysis.semantics import shapes
    array = call.receiver
    given = call.args[0] if len(call.args) == 1 and isinstance(call.args[0], TupleValue) \
        else TupleValue(tuple(call.args))
    sizes = None if call.starred or call.kwargs or not call.args else _sizes(call, given)
    return NdArray(shapes.view(array.shape, list(sizes)) if sizes else None, dtype=array.dtype)


def array_attribute(array: NdArray, name: str):
    """`a.shape` (a tuple of ints when known) and `a.T`; None for any other."""
    if name == "shape" and array.shape is not None:
        return TupleValue(tuple(NumberValue("int", d) if isinstance(d, int) else NumberValue("int")
                                for d in array.shape))
    if name == "T":
        return NdArray(tuple(reversed(array.shape)) if array.shape is not None else None, dtype=array.dtype)
    return None


def _literal_dtype(state, value) -> str | None:
    """`np.array([[5]])`: the dtype of an array made from (nested) lists or tuples of
    known numbers; None when anything in it is not one."""
    from autograd_lsp.analysis.semantics import containers
    kinds, pending = set(), [value]
    while pending:
        if len(kinds) > 3 or len(pending) > 4096:
            return None
        item = state.fresh(pending.pop())
        if isinstance(item, NumberValue):
            kinds.add(item.kind)
        elif isinstance(item, TupleValue):
            pending.extend(item.items)
        elif isinstance(item, ObjectRef) and item.kind == "list":
            items = containers.known_items(state, item)
            if items is None:
                return None
            pending.extend(items)
        else:
            return None
    if not kinds or kinds - {"int", "float", "bool"}:
        return None
    # NumPy's default float and integer (int64 on Linux and macOS, and everywhere
    # since NumPy 2); bools alone stay bool.
    return "float64" if "float" in kinds else "int64" if "int" in kinds else "bool"


# Arithmetic on arrays: NumPy's promotion of the result's dtype, where Python
# numbers are weak (NEP 50: a float32 array times 1e-3 stays float32).
_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "pow", "floor_divide", "remainder"})
_FLOATS = ("float16", "float32", "float64")


def array_arithmetic(op: str, left, right):
    """`a * 1e-3`, `a / n`, `a + b` with an array on a side and a number or array on
    the other: an array whose dtype NumPy gives (None when not known); None for
    anything else."""
    if op not in _ARITHMETIC or not (isinstance(left, NdArray) or isinstance(right, NdArray)) \
            or not all(isinstance(v, (NdArray, NumberValue)) for v in (left, right)):
        # (With a tensor, or what may be one, torch's operators decide.)
        return None
    from autograd_lsp.analysis.semantics import shapes
    array = left if isinstance(left, NdArray) else right
    other = right if array is left else left
    shape = array.shape if isinstance(other, NumberValue) else \
        shapes.broadcast(array.shape, other.shape) if array.shape is not None and other.shape is not None else None
    return NdArray(shape, dtype=_promoted(op, array.dtype, other))


def _promoted(op: str, dtype, other) -> str | None:
    if isinstance(other, NumberValue):
        if dtype in _FLOATS:
            return dtype
        if dtype == "int64":
            if other.kind == "float" or op == "div":
                return "float64"
            return "int64" if other.kind == "int" and op != "pow" else None
        return None
    pair = {dtype, other.dtype}
    if "float64" in pair and pair <= {"float64", "float32", "float16", "int64"}:
        return "float64"
    return dtype if pair == {dtype} and dtype in _FLOATS else None


@method("ndarray", "astype")
def _astype(call: Call):
    """`a.astype(np.int64)`: the same values in another dtype."""
    return NdArray(call.receiver.shape, dtype=numpy_dtype(call.arg(0, "dtype")))


def _graph_tensor(call: Call):
    """A tensor that requires grad among what a NumPy function converts with
    `__array__`: its first argument when it builds an array from it, or the items of
    a list or tuple given there."""
    from autograd_lsp.analysis.semantics import containers
    value = call.arg(0)
    if isinstance(value, TensorFacts):
        # Reductions call a lone tensor's own method instead of converting it.
        converts = call.qualname in NUMPY_CONVERTING_TENSOR or call.qualname in NUMPY_UFUNCS
        return value if value.requires_grad is True and converts else None
    items = ()
    if isinstance(value, ObjectRef) and value.kind == "list":
        items = containers.known_items(call.state, value) or [containers.item_of(call.state, value)]
    elif isinstance(value, TupleValue):
        items = value.items
    for item in items:
        item = call.state.fresh(item)
        if isinstance(item, TensorFacts) and item.requires_grad is True:
            return item
    return None


def _numpy_constant(call: Call):
    return UNKNOWN


PREFIXES.append(("numpy.", _numpy_family))


@method("any", "__array__")
def _array(call: Call):
    return NdArray()


@function("collections.namedtuple")
def _namedtuple(call: Call):
    """`namedtuple("Out", ["loss", "logits"])` or `namedtuple("Out", "loss logits")`:
    a type whose calls make named tuples; unknown unless every field name is."""
    from autograd_lsp.analysis.semantics.builtins import iterate
    spec = call.state.fresh(call.arg(1, "field_names"))
    if isinstance(spec, StrValue):
        if spec.value is None:
            return UNKNOWN
        fields = tuple(spec.value.replace(",", " ").split())
    else:
        found = iterate(call, spec)
        if found.elements is None or not all(isinstance(e, StrValue) and e.value for e in found.elements):
            return UNKNOWN
        fields = tuple(e.value for e in found.elements)
    if not fields or not all(f.isidentifier() for f in fields) or call.given(None, "defaults"):
        return UNKNOWN
    return NamedTupleType(fields)


def make_named_tuple(call: Call, kind: NamedTupleType):
    """A call of a namedtuple type: its items by position, then by keyword."""
    items = list(call.args[:len(kind.fields)])
    for name in kind.fields[len(items):]:
        if name not in call.kwargs:
            return UNKNOWN
        items.append(call.kwargs[name])
    if call.starred or len(call.args) > len(kind.fields):
        return UNKNOWN
    return TupleValue(tuple(items), kind.fields)


@function("copy.deepcopy")
def _deepcopy(call: Call):
    value = call.arg(0)
    return deep_copy(call, value, {})


def deep_copy(call: Call, value, memo: dict):
    """A copy of an object graph with new identities: a deep-copied model has
    parameters of its own (leaves that require grad, like the original's)."""
    state = call.state
    value = state.fresh(value)
    if isinstance(value, TensorFacts):
        if value.tid in memo:
            return memo[value.tid]
        copy = state.created(replace(value, tid=call.new_id(1000 + len(memo)),
                                     leaves=frozenset(), grad="none" if value.is_leaf and value.requires_grad
                                     else None, saved_nodes=frozenset(), saved_by=frozenset(),
                                     label=None))
        if copy.is_leaf and copy.requires_grad:
            copy = state.created(replace(copy, leaves=frozenset({copy.tid})))
        memo[value.tid] = copy
        return copy
    if isinstance(value, TupleValue):
        return TupleValue(tuple(deep_copy(call, v, memo) for v in value.items))
    if isinstance(value, ObjectRef):
        if value.oid in memo:
            return memo[value.oid]
        if len(memo) > 2000:
            return UNKNOWN
        new = ObjectRef(call.new_id(1000 + len(memo)), value.kind, value.cls)
        memo[value.oid] = new
        attrs = state.attrs(value)
        copied = {}
        for key, item in attrs.items():
            if key in ("params", "modules"):
                copied[key] = item
            elif key == "_items":
                copied[key] = tuple(deep_copy(call, v, memo) for v in item) if item is not None else None
            elif key in ("entries", "_entries"):
                copied[key] = {k: deep_copy(call, v, memo) for k, v in item.items()} if item is not None else None
            elif key == "items":
                copied[key] = tuple(deep_copy(call, v, memo) for v in item) if item is not None else None
            else:
                copied[key] = deep_copy(call, item, memo)
        state.new_object(new, copied)
        return new
    return value


@function("copy.copy")
def _shallow_copy(call: Call):
    value = call.arg(0)
    if isinstance(value, ObjectRef):
        new = ObjectRef(call.new_id(), value.kind, value.cls)
        call.state.new_object(new, dict(call.state.attrs(value)))
        return new
    return value


def _passes_iterable(call: Call):
    """A progress bar or similar wrapper: iterating it iterates its argument."""
    return call.arg(0, "iterable")


for _name in ("tqdm.tqdm", "tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm",
              "tqdm.autonotebook.tqdm", "progressbar.progressbar", "rich.progress.track"):
    function(_name)(_passes_iterable)


@function("itertools.chain")
def _chain(call: Call):
    from autograd_lsp.analysis.semantics import containers
    from autograd_lsp.analysis.semantics.builtins import iterate
    elements, item = [], None
    known = not call.starred
    for value in call.args:
        inner = iterate(call, value)
        if inner.elements is None:
            known = False
        else:
            elements.extend(inner.elements)
    if known:
        lst = containers.new_list(call, elements)
    else:
        from autograd_lsp.analysis.facts import join
        for value in call.args:
            el = iterate(call, value).element
            item = el if item is None else join(item, el)
        lst = containers.new_list(call, None, item=item or UNKNOWN)
    params = [p for v in call.args if isinstance(v, ObjectRef)
              for p in call.state.attrs(v).get("_params", ())]
    if params:
        call.state.set_attr(lst, "_params", tuple(params))
    return lst


@function("collections.defaultdict", "collections.OrderedDict", "collections.Counter")
def _collections(call: Call):
    from autograd_lsp.analysis.semantics import containers
    if call.qualname and call.qualname.endswith("OrderedDict") and not call.args:
        return containers.new_dict(call, dict(call.kwargs), True)
    factory = call.arg(0, "default_factory", None)
    if call.qualname and call.qualname.endswith("defaultdict") and len(call.args) <= 1 and not call.kwargs \
            and isinstance(factory, BuiltinName) and factory.name in containers.DEFAULT_FACTORIES:
        # `defaultdict(list)`: known entries, and a missing key read makes its own
        # (`handlers[event].append(fn)`, then `for fn in handlers[event]`).
        ref = containers.new_dict(call, {}, True)
        call.state.set_attr(ref, "_factory", factory.name)
        return ref
    return containers.new_dict(call, {}, False)


@function("collections.deque")
def _deque(call: Call):
    """A deque is a list to the analysis (a replay memory: `append`, then
    `random.sample`). With `maxlen`, old items fall out: which ones are in it is
    not known, only what each one is."""
    from autograd_lsp.analysis.semantics import containers
    from autograd_lsp.analysis.semantics.builtins import iterate
    given = call.arg(0, "iterable", None)
    bounded = call.given(1, "maxlen") and call.arg(1, "maxlen") is not NONE
    if given is None and not bounded:
        return containers.new_list(call, [])
    inner = iterate(call, given) if given is not None else None
    if inner is not None and inner.elements is not None and not bounded:
        return containers.new_list(call, inner.elements)
    ref = containers.new_list(call, None, item=inner.element if inner is not None else UNKNOWN,
                              nonempty=inner.nonempty if inner is not None else False)
    call.state.set_attr(ref, "bounded", True)
    return ref


def _math_family(qualname: str):
    if qualname in ("math.pi", "math.e", "math.inf", "math.tau"):
        return None
    return _math_function


def _math_function(call: Call):
    return NumberValue("float")


PREFIXES.append(("math.", _math_family))
PREFIXES.append(("time.", lambda q: (lambda call: NumberValue("float"))))


# `random`: numbers, or an item of the sequence given (`x, y = random.choice(pairs)`).
_RANDOM_FLOATS = frozenset({"random", "uniform", "gauss", "normalvariate", "lognormvariate",
                            "expovariate", "betavariate", "gammavariate", "triangular",
                            "vonmisesvariate", "paretovariate", "weibullvariate"})
_RANDOM_INTS = frozenset({"randint", "randrange", "getrandbits"})


def _random_family(qualname: str):
    name = qualname[len("random."):]
    if name in _RANDOM_FLOATS:
        return lambda call: NumberValue("float")
    if name in _RANDOM_INTS:
        return lambda call: NumberValue("int")
    return {"choice": _random_choice, "shuffle": _random_shuffle, "sample": _random_sample,
            "seed": lambda call: NONE}.get(name)


def _random_choice(call: Call):
    from autograd_lsp.analysis.semantics import containers
    sequence = call.arg(0, "seq")
    if isinstance(sequence, TupleValue):
        return join_all(sequence.items)
    if isinstance(sequence, ObjectRef) and sequence.kind == "list":
        return containers.item_of(call.state, sequence)
    return UNKNOWN


def _random_sample(call: Call):
    """`random.sample(memory, k)`: a new list of items of the population."""
    from autograd_lsp.analysis.semantics import containers
    population = call.arg(0, "population")
    if isinstance(population, TupleValue):
        item = join_all(population.items) if population.items else UNKNOWN
    elif isinstance(population, ObjectRef) and population.kind == "list":
        item = containers.item_of(call.state, population)
    else:
        return UNKNOWN
    from autograd_lsp.analysis.semantics.builtins import MAX_SIZED_LIST
    k = call.number(1, "k")
    if isinstance(k, int) and 0 <= k <= MAX_SIZED_LIST:
        # (As many as asked for, or it raises.)
        return containers.new_list(call, [item] * k)
    return containers.new_list(call, None, item=item)


def _random_shuffle(call: Call):
    from autograd_lsp.analysis.semantics import containers
    sequence = call.arg(0, "x")
    if isinstance(sequence, ObjectRef) and sequence.kind == "list":
        containers.forget_order(call.state, sequence, same_length=True)
    return NONE


PREFIXES.append(("random.", _random_family))


@function("functools.partial")
def _partial(call: Call):
    if call.starred or not call.args:
        return UNKNOWN
    return Partial(call.args[0], tuple(call.args[1:]), tuple(call.kwargs.items()))


__all__ = ["NdArray", "NUMPY_CONVERTING", "deep_copy", "NONE", "StrValue", "Unknown"]


@function("types.SimpleNamespace", "argparse.Namespace")
def _namespace(call: Call):
    """An object whose attributes are its keyword arguments (options, configs)."""
    ref = ObjectRef(call.new_id(), "instance", call.qualname)
    call.state.new_object(ref, dict(call.kwargs))
    return ref
