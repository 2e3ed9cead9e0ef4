"""Shapes as far as they are known: a dimension is an int, a `Sym` (a loader's
batch) or None. Every function returns None (unknown) rather than guess."""
from __future__ import annotations

from autograd_lsp.analysis.facts import Shape, Sym


def broadcast(*shapes: Shape) -> Shape:
    if any(s is None for s in shapes):
        return None
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        dims.discard(1)
        known = dims - {None}
        if not dims:
            out.append(1)
        elif len(known) == 1:
            # An unknown size beside a known one is 1 or the same, or the op raises:
            # where it runs, the result has the known size.
            out.append(known.pop())
        elif not known:
            out.append(None)
        else:
            return None
    return tuple(out)


def matmul(a: Shape, b: Shape) -> Shape:
    if a is None or b is None or len(a) == 0 or len(b) == 0:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 2 and len(b) == 1:
        return (a[0],)
    if len(a) == 1 and len(b) == 2:
        return (b[1],)
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if len(a) >= 3 and len(b) == 2:
        return a[:-1] + (b[1],)
    if len(a) >= 3 and len(b) >= 3 and len(a) == len(b):
        batch = broadcast(a[:-2], b[:-2])
        return None if batch is None else batch + (a[-2], b[-1])
    return None


def normalize_dim(dim, ndim: int):
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None
    if dim < 0:
        dim += ndim
    return dim if 0 <= dim < ndim else None


def reduce(shape: Shape, dims, keepdim: bool) -> Shape:
    """Shape after reducing over `dims` (a list of ints; None: not known)."""
    if shape is None or dims is None:
        return None
    picked = set()
    for d in dims:
        n = normalize_dim(d, len(shape))
        if n is None:
            return None
        picked.add(n)
    if keepdim:
        return tuple(1 if i in picked else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in picked)


def numel(shape: Shape):
    if shape is None:
        return None
    total = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        total *= d
    return total


def scaled(d, factor: int):
    """A dimension times a whole number (a batch of sequences flattened: B * 6)."""
    if isinstance(d, int):
        return d * factor
    if isinstance(d, Sym):
        if factor == 1:
            return d
        return Sym(f"{d.label}*{factor}", d.first * factor if d.first is not None else None,
                   d.bound * factor if d.bound is not None else None)
    return None


def product(dims) -> object:
    """The number of elements of these dims: an int, a Sym scaled by the others, or None."""
    syms = [d for d in dims if isinstance(d, Sym)]
    if any(d is None for d in dims) or len(syms) > 1:
        return None
    rest = 1
    for d in dims:
        if isinstance(d, int):
            rest *= d
    return scaled(syms[0], rest) if syms else rest


def view(shape: Shape, sizes: list) -> Shape:
    """`t.view(*sizes)` / `reshape`: sizes are ints, Syms, -1 or None."""
    if sizes is None:
        return None
    if any(s is None for s in sizes):
        return None
    if sizes.count(-1) > 1:
        return None
    if -1 in sizes:
        total = product(shape) if shape is not None else None
        rest = [s for s in sizes if s != -1]
        if shape is not None and all(isinstance(s, int) for s in rest) and total is not None:
            known = 1
            for s in rest:
                known *= s
            inferred = _divided(total, known)
            if inferred is None:
                return None
            return tuple(inferred if s == -1 else s for s in sizes)
        # `x.view(B, -1)` where the batch dim is kept
        if shape is not None and len(shape) >= 1 and sizes[0] == shape[0] and len(sizes) == 2:
            return (shape[0], None) if sizes[1] == -1 else None
        return None
    return tuple(sizes)


def _divided(total, known: int):
    if known == 0:
        return None
    if isinstance(total, int):
        return total // known if total % known == 0 else None
    if isinstance(total, Sym):
        if known == 1:
            return total
        label, _, factor = total.label.rpartition("*")
        if label and factor.isdigit() and int(factor) % known == 0:
            base = Sym(label, total.first // int(factor) if total.first is not None else None,
                       total.bound // int(factor) if total.bound is not None else None)
            return scaled(base, int(factor) // known)
    return None


def squeeze(shape: Shape, dim=None) -> Shape:
    if shape is None:
        return None
    if dim is None:
        if any(not isinstance(d, int) for d in shape):
            return None
        return tuple(d for d in shape if d != 1)
    n = normalize_dim(dim, len(shape))
    if n is None:
        return None
    if shape[n] == 1:
        return shape[:n] + shape[n + 1:]
    if isinstance(shape[n], int):
        return shape
    return None


def unsqueeze(shape: Shape, dim) -> Shape:
    if shape is None:
        return None
    n = normalize_dim(dim, len(shape) + 1)
    if n is None:
        return None
    return shape[:n] + (1,) + shape[n:]


def diagonal(shape: Shape, offset=0, dim1=0, dim2=1) -> Shape:
    """`t.diagonal(offset, dim1, dim2)`: the two dims go, their diagonal's length is last."""
    if shape is None or len(shape) < 2 or not isinstance(offset, int):
        return None
    a, b = normalize_dim(dim1, len(shape)), normalize_dim(dim2, len(shape))
    if a is None or b is None or a == b:
        return None
    rows, cols = shape[a], shape[b]
    if isinstance(rows, int) and isinstance(cols, int) and not isinstance(rows, bool):
        length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    elif offset == 0 and rows is not None and rows == cols:
        length = rows             # a square of one symbolic size (a batch against itself)
    else:
        length = None
    return tuple(d for i, d in enumerate(shape) if i not in (a, b)) + (length,)


def transpose(shape: Shape, a, b) -> Shape:
    if shape is None:
        return None
    x, y = normalize_dim(a, len(shape)), normalize_dim(b, len(shape))
    if x is None or y is None:
        return None
    out = list(shape)
    out[x], out[y] = out[y], out[x]
    return tuple(out)


def permute(shape: Shape, order) -> Shape:
    if shape is None or order is None or len(order) != len(shape):
        return None
    dims = [normalize_dim(d, len(shape)) for d in order]
    if any(d is None for d in dims) or sorted(dims) != list(range(len(shape))):
        return None
    return tuple(shape[d] for d in dims)


def flatten(shape: Shape, start=0, end=-1) -> Shape:
    if shape is None:
        return None
    if not shape:
        return (1,)
    s, e = normalize_dim(start, len(shape)), normalize_dim(end, len(shape))
    if s is None or e is None or s > e:
        return None
    middle = product(shape[s:e + 1])
    return shape[:s] + (middle,) + shape[e + 1:]


def concatenate(shapes: list, dim) -> Shape:
    if not shapes or any(s is None for s in shapes):
        return None
    ndim = len(shapes[0])
    if any(len(s) != ndim for s in shapes) or ndim == 0:
        return None
    n = normalize_dim(dim, ndim)
    if n is None:
        return None
    sizes = [s[n] for s in shapes]
    total = sum(sizes) if all(isinstance(x, int) for x in sizes) else _symbolic_sum(sizes)
    rest = shapes[0]
    return rest[:n] + (total,) + rest[n + 1:]


def _symbolic_sum(sizes: list):
    """The size of batches joined end to end (`torch.cat([z1, z2])` of two views of
    one batch): a symbol whose first size and bound are the sums, when each part's
    are known; else unknown."""
    if any(x is None or (isinstance(x, Sym) and (x.first is None or x.bound is None)) for x in sizes):
        return None
    first = sum(x.first if isinstance(x, Sym) else x for x in sizes)
    bound = sum(x.bound if isinstance(x, Sym) else x for x in sizes)
    return Sym("+".join(x.label if isinstance(x, Sym) else str(x) for x in sizes), first, bound)


def stack(shapes: list, dim) -> Shape:
    if not shapes or any(s is None for s in shapes) or any(s != shapes[0] for s in shapes):
        return None
    n = normalize_dim(dim, len(shapes[0]) + 1)
    if n is None:
        return None
    base = shapes[0]
    return base[:n] + (len(shapes),) + base[n:]


def batch_of(size: int | None, dataset_len: int | None, label: str = "B") -> Sym | int | None:
    """The batch dimension of a DataLoader: its first batch has
    min(batch_size, len(dataset)) items."""
    if size is None:
        return Sym(label)
    if dataset_len is not None and dataset_len <= size:
        return dataset_len
    if size == 1:
        return 1
    return Sym(label, first=size if dataset_len is not None else None, bound=size)
