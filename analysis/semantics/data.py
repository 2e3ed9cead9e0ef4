"""torch.utils.data: datasets and data loaders, and what a batch holds.

A loader over `TensorDataset(x, y)` with `batch_size=8` yields `(xb, yb)` whose
first dimension is the batch (a `Sym`: 8 on the first batch when the dataset is
that long) and whose other dimensions are the tensors'. A dataset class of the
analysed code is asked for one item (`__getitem__`), and the loader stacks it.
"""
from __future__ import annotations

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, ClassValue, NumberValue, ObjectRef, StrValue, TensorFacts,
                            TupleValue, Unknown, replace)
from autograd_lsp.analysis.semantics import Call, function, method, shapes


@function("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset")
def _tensor_dataset(call: Call):
    tensors = [call.state.fresh(v) for v in call.args]
    ref = ObjectRef(call.new_id(), "dataset", "torch.utils.data.TensorDataset")
    first = tensors[0].shape[0] if tensors and isinstance(tensors[0], TensorFacts) and tensors[0].shape else None
    length = first if isinstance(first, int) else None
    items = TupleValue(tuple(_row(call, t, i) for i, t in enumerate(tensors))) if not call.starred else UNKNOWN
    call.state.new_object(ref, {"item": items, "length": NumberValue("int", length),
                                "tensors": TupleValue(tuple(tensors))})
    return ref


def _row(call: Call, t, index: int):
    if not isinstance(t, TensorFacts):
        return UNKNOWN
    return call.state.created(TensorFacts(
        tid=call.new_id(20 + index), requires_grad=t.requires_grad,
        is_leaf=t.is_leaf if t.requires_grad is False else None, dtype=t.dtype,
        shape=t.shape[1:] if t.shape else None, no_grad_reason=t.no_grad_reason,
        opaque=t.opaque, unseen_history=t.unseen_history, device=t.device, leaves=t.leaves,
        saved_nodes=t.saved_nodes))


@function("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
def _data_loader(call: Call):
    dataset = call.arg(0, "dataset")
    batch_size = call.arg(1, "batch_size", NumberValue("int", 1))
    size = batch_size.value if isinstance(batch_size, NumberValue) and isinstance(batch_size.value, int) \
        else None
    no_batching = batch_size is NONE
    item, length = dataset_facts(call, dataset)
    collate_fn = call.kwargs.get("collate_fn", NONE)
    if collate_fn is not NONE:
        batch = _user_collate(call, collate_fn, item, no_batching)
    else:
        batch = item if no_batching else collate(call, item, shapes.batch_of(size, length), 0)
    ref = ObjectRef(call.new_id(), "loader", "torch.utils.data.DataLoader")
    call.state.new_object(ref, {"batch": batch, "dataset": dataset,
                                "batch_size": NumberValue("int", size)})
    return ref


@function("torch.utils.data.random_split", "torch.utils.data.dataset.random_split")
def _random_split(call: Call):
    from autograd_lsp.analysis.semantics import containers
    dataset = call.arg(0, "dataset")
    item, _ = dataset_facts(call, dataset)
    part = ObjectRef(call.new_id(1), "dataset", "torch.utils.data.Subset")
    call.state.new_object(part, {"item": item, "length": NumberValue("int")})
    lengths = call.arg(1, "lengths")
    count = len(lengths.items) if isinstance(lengths, TupleValue) else None
    if count is None and isinstance(lengths, ObjectRef):
        items = containers.known_items(call.state, lengths)
        count = len(items) if items is not None else None
    if count is not None and count <= 8:
        return containers.new_list(call, [part] * count)
    return containers.new_list(call, None, item=part)


@function("torch.utils.data.Subset", "torch.utils.data.dataset.Subset")
def _subset(call: Call):
    item, _ = dataset_facts(call, call.arg(0, "dataset"))
    ref = ObjectRef(call.new_id(), "dataset", "torch.utils.data.Subset")
    call.state.new_object(ref, {"item": item, "length": NumberValue("int")})
    return ref


def _user_collate(call: Call, collate_fn, item, no_batching: bool):
    """A batch made by the loader's `collate_fn`: a function of the analysed code is
    run once, given a list of items (one item without batching); anything else
    makes a batch not known."""
    from autograd_lsp.analysis.facts import BoundMethod, FunctionValue, Partial
    from autograd_lsp.analysis.semantics import containers
    if not isinstance(collate_fn, (FunctionValue, BoundMethod, Partial)):
        return UNKNOWN
    given = item if no_batching else containers.new_list(call, None, item=item, nonempty=True)
    inner = Call(call.node, [given], {}, call.state, call.ctx, call.walker, call.frame)
    value, _ = call.walker.apply(collate_fn, inner)
    return call.state.fresh(value)


def dataset_facts(call: Call, dataset):
    """(what one item of the dataset is, its length when known)."""
    state = call.state
    if isinstance(dataset, ObjectRef) and dataset.kind == "dataset":
        attrs = state.attrs(dataset)
        if "item" in attrs:
            length = attrs.get("length")
            return state.fresh(attrs["item"]), length.value if isinstance(length, NumberValue) else None
        return dataset_item(call, dataset), None
    if isinstance(dataset, ObjectRef) and dataset.kind == "list":
        from autograd_lsp.analysis.semantics import containers
        items = containers.known_items(state, dataset)
        return containers.item_of(state, dataset), len(items) if items is not None else None
    if isinstance(dataset, TensorFacts):
        return _row(call, dataset, 0), dataset.shape[0] if dataset.shape and isinstance(dataset.shape[0], int) else None
    return UNKNOWN, None


def dataset_item(call: Call, dataset: ObjectRef):
    """`dataset[i]`: a user Dataset class's `__getitem__` run with an unknown index."""
    state = call.state
    attrs = state.attrs(dataset)
    if "item" in attrs:
        return state.fresh(attrs["item"])
    cls = dataset.cls
    if isinstance(cls, ClassValue):
        getitem = cls.lookup("__getitem__")
        if getitem is not None:
            from autograd_lsp.analysis.facts import BoundMethod
            inner = Call(call.node, [NumberValue("int")], {}, state, call.ctx, call.walker, call.frame)
            value, _ = call.walker.apply(BoundMethod(getitem, dataset), inner)
            return state.fresh(value)
    return UNKNOWN


def collate(call: Call, item, batch, depth: int):
    """What the default collate makes of items like `item`: tensors stacked along a
    new batch dimension, numbers made tensors, tuples and dicts collated inside."""
    from autograd_lsp.analysis.semantics import containers, tensors
    state = call.state
    item = state.fresh(item)
    if depth > 3:
        return UNKNOWN
    if isinstance(item, TensorFacts) and item.requires_grad is True and item.shape is not None:
        # Rows of a tensor with a graph (features a model computed before the loop),
        # stacked: each batch backwards through that graph.
        return tensors.derived(call, "stack", [item], (batch,) + item.shape, item.dtype, saves=False,
                               grad_fn="StackBackward0")
    if isinstance(item, TensorFacts):
        plain = item.requires_grad is not True
        return state.created(TensorFacts(
            tid=call.new_id(), requires_grad=False if plain else None,
            is_leaf=True if plain else None, dtype=item.dtype,
            shape=(batch,) + item.shape if item.shape is not None else None,
            no_grad_reason="never" if plain else None, opaque=not plain, unseen_history=not plain,
            device="cpu"))
    if isinstance(item, NumberValue):
        dtype = {"int": "int64", "float": "float64", "bool": "bool"}.get(item.kind)
        return tensors.new_tensor(call, False, True, dtype=dtype, shape=(batch,), reason="never",
                                  device="cpu", ignore_no_grad=True, part=None)
    if isinstance(item, TupleValue):
        return TupleValue(tuple(collate(call, v, batch, depth + 1) for v in item.items))
    if isinstance(item, ObjectRef) and item.kind == "dict":
        entries = containers.entries_of(state, item)
        if entries is not None:
            return containers.new_dict(call, {k: collate(call, v, batch, depth + 1)
                                              for k, v in entries.items()}, True)
    if isinstance(item, ObjectRef) and item.kind == "list":
        items = containers.known_items(state, item)
        if items is not None:
            return containers.new_list(call, [collate(call, v, batch, depth + 1) for v in items])
    if isinstance(item, StrValue):
        return UNKNOWN
    return UNKNOWN


def iterate(call: Call, ref: ObjectRef):
    from autograd_lsp.analysis.semantics.builtins import Iteration
    state = call.state
    attrs = state.attrs(ref)
    if ref.kind == "loader":
        return Iteration(None, state.fresh(attrs.get("batch", UNKNOWN)), True, renewed=True)
    item, length = dataset_facts(call, ref)
    return Iteration(None, item, None if length is None else length > 0)


@method("loader", "__iter__")
def _loader_iter(call: Call):
    return call.receiver


@method("dataset", "__len__")
def _dataset_len(call: Call):
    return NumberValue("int")


__all__ = ["collate", "iterate", "dataset_item", "dataset_facts", "replace", "Unknown"]
