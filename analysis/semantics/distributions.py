"""torch.distributions: a policy's `Categorical(logits=...)`, a Gaussian head's `Normal`.

A distribution is an object holding the tensors it was made from. What it
gives back is measured with torch 2.13:

- `sample()` never requires grad (nothing flows back through a draw), whatever
  its parameters require; `Categorical` draws int64 indices;
- `rsample()` (reparameterised: Normal and the other continuous families) and
  `log_prob(value)` are computed from the parameters (and the value), so they
  require grad when a parameter does;
- `entropy()` is computed from the parameters, `Normal`'s from `scale` alone;
- `mean` / `loc` and `stddev` / `scale` of a `Normal` are the tensors it was given.

Shapes: a `Categorical`'s batch is its parameter's shape without the last
dimension; a `Normal`'s the broadcast of `loc` and `scale`; a `Bernoulli`'s its
parameter's. Other families keep their tensors but claim no shape.
"""
from __future__ import annotations

from autograd_lsp.analysis.facts import UNKNOWN, NumberValue, ObjectRef, TensorFacts, TupleValue
from autograd_lsp.analysis.semantics import PREFIXES, Call, method, shapes
from autograd_lsp.analysis.semantics import tensors as t_ops

# family -> the names of its parameters, in the constructor's order
_PARAMETERS = {
    "Categorical": ("probs", "logits"),
    "OneHotCategorical": ("probs", "logits"),
    "Bernoulli": ("probs", "logits"),
    "Normal": ("loc", "scale"),
    "Laplace": ("loc", "scale"),
    "Cauchy": ("loc", "scale"),
    "LogNormal": ("loc", "scale"),
    "MultivariateNormal": ("loc", "covariance_matrix", "precision_matrix", "scale_tril"),
    "Beta": ("concentration1", "concentration0"),
    "Gamma": ("concentration", "rate"),
    "Dirichlet": ("concentration",),
    "Exponential": ("rate",),
    "Poisson": ("rate",),
    "Uniform": ("low", "high"),
}
# (family, method) -> the grad_fn of its result, measured with torch 2.13; others unnamed.
_GRAD_FNS = {
    ("Categorical", "log_prob"): "SqueezeBackward1", ("Categorical", "entropy"): "NegBackward0",
    ("OneHotCategorical", "log_prob"): "SqueezeBackward1", ("OneHotCategorical", "entropy"): "NegBackward0",
    ("Bernoulli", "log_prob"): "NegBackward0",
    ("Bernoulli", "entropy"): "BinaryCrossEntropyWithLogitsBackward0",
    ("Normal", "log_prob"): "SubBackward0", ("Normal", "entropy"): "AddBackward0",
    ("Normal", "rsample"): "AddBackward0",
}
# Families whose draws are indices or counts: `rsample` raises NotImplementedError.
_NO_RSAMPLE = frozenset({"Categorical", "OneHotCategorical", "Bernoulli", "Poisson"})


def _family(qualname: str):
    """`torch.distributions.Normal` and `torch.distributions.normal.Normal`."""
    name = qualname.rsplit(".", 1)[-1]
    if name not in _PARAMETERS:
        return None
    return lambda call: _make(call, name)


PREFIXES.append(("torch.distributions.", _family))


def _make(call: Call, family: str) -> ObjectRef:
    given = {}
    for position, name in enumerate(_PARAMETERS[family]):
        value = call.arg(position, name, None)
        if value is not None:
            given[name] = value
    ref = ObjectRef(call.new_id(), "distribution", f"torch.distributions.{family}")
    attrs = {"_family": family, "_parameters": given, **given}
    if family == "Normal" and "loc" in given and "scale" in given:
        attrs.update(mean=given["loc"], stddev=given["scale"])
    return call.state.new_object(ref, attrs)


def _parts(call: Call):
    """(family, {parameter name: value}) of the receiver; None when not known."""
    attrs = call.state.attrs(call.receiver)
    family, given = attrs.get("_family"), attrs.get("_parameters")
    if family is None or given is None or call.starred:
        return None
    return family, {k: call.state.fresh(v) for k, v in given.items()}


def _batch_shape(family: str, given: dict):
    values = list(given.values())
    if any(not isinstance(v, (TensorFacts, NumberValue)) for v in values):
        return None
    shapes_ = [v.shape if isinstance(v, TensorFacts) else () for v in values]
    if family in ("Categorical", "OneHotCategorical"):
        [shape] = shapes_ if len(shapes_) == 1 else [None]
        return shape[:-1] if shape else None
    if family in ("Normal", "Bernoulli", "Laplace", "Cauchy", "LogNormal", "Uniform", "Exponential",
                  "Poisson", "Gamma", "Beta"):
        return shapes.broadcast(*shapes_)
    return None


def _dtype(given: dict):
    dtypes = {v.dtype for v in given.values() if isinstance(v, TensorFacts)}
    if not dtypes and given:
        return "float32"               # python floats make float32 parameters
    return dtypes.pop() if len(dtypes) == 1 else None


def _sample_shape(call: Call, family: str, given: dict):
    batch = _batch_shape(family, given)
    extra = call.arg(0, "sample_shape", TupleValue(()))
    if isinstance(extra, NumberValue):
        extra = TupleValue((extra,))
    # (Dims as factories read them: ints, a batch's Sym, unknown ints.)
    dims = t_ops.size_from([extra]) if isinstance(extra, TupleValue) else None
    if batch is None or dims is None or family == "OneHotCategorical":
        return None
    return dims + tuple(batch)


def _distribution_method(name):
    """Register `fn(call, family, parameters)` for `dist.name(...)`; unknown
    distributions give unknown results."""
    def register(fn):
        def run(call: Call):
            parts = _parts(call)
            return UNKNOWN if parts is None else fn(call, *parts)
        return method("distribution", name)(run)
    return register


def _computed(call: Call, family: str, op: str, inputs: list, shape, given: dict):
    """A result computed from the parameters: it requires grad when one does."""
    return t_ops.derived(call, op, inputs, shape, _dtype(given), saves=True, saved=[],
                         grad_fn=_GRAD_FNS.get((family, op)))


@_distribution_method("sample")
def _sample(call: Call, family: str, given: dict):
    dtype = "int64" if family == "Categorical" else _dtype(given)
    return t_ops.new_tensor(call, False, True, dtype, _sample_shape(call, family, given), "sample")


@_distribution_method("rsample")
def _rsample(call: Call, family: str, given: dict):
    if family in _NO_RSAMPLE:
        return UNKNOWN
    return _computed(call, family, "rsample", list(given.values()), _sample_shape(call, family, given), given)


@_distribution_method("log_prob")
def _log_prob(call: Call, family: str, given: dict):
    value = call.arg(0, "value")
    if not isinstance(value, (TensorFacts, NumberValue)):
        return UNKNOWN
    batch = _batch_shape(family, given)
    shape = None
    if batch is not None and isinstance(value, TensorFacts) and value.shape is not None \
            and family in ("Categorical", "Normal", "Bernoulli"):
        shape = shapes.broadcast(value.shape, batch)
    return _computed(call, family, "log_prob", [*given.values(), value], shape, given)


@_distribution_method("entropy")
def _entropy(call: Call, family: str, given: dict):
    inputs = [given["scale"]] if family == "Normal" and "scale" in given else list(given.values())
    return _computed(call, family, "entropy", inputs, _batch_shape(family, given), given)
