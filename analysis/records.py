"""Records: the dataclasses of values that are never changed once made.

Facts, findings, settings and the like are shared between heaps, caches and
threads, so no code may change one after it is made (`facts.replace` makes a
changed copy). The test suite enforces that: with `AUTOGRAD_LSP_FROZEN_RECORDS=1`
(set by `tests/conftest.py`) records are frozen dataclasses and an assignment
raises. In use they are plain dataclasses: a frozen class's `__init__` pays an
`object.__setattr__` per field, which the walker runs many thousand times a file.

Equality, hash and repr are shared functions over the instance's fields rather
than methods generated per class: the dataclass machinery compiles each generated
method separately, and for the seventy-odd records that was a quarter of what a
`check` of one small file costs (all of it at import). A record whose fields all
take part in equality (all but `TensorFacts`) compares its instance dicts, which
hold exactly its fields in their order.
"""
from __future__ import annotations

import os
from dataclasses import Field, dataclass, fields

FROZEN = os.environ.get("AUTOGRAD_LSP_FROZEN_RECORDS") == "1"


def record(cls=None, /, *, eq: bool = True):
    """`@record`, or `@record(eq=False)` for identity equality and hash."""

    def make(cls):
        if eq and _has_uncompared_fields(cls):
            made = dataclass(frozen=FROZEN, eq=True, unsafe_hash=not FROZEN, repr=False)(cls)
        else:
            made = dataclass(frozen=FROZEN, eq=False, repr=False)(cls)
            if eq:
                _set_default(made, "__eq__", _equal_fields)
                _set_default(made, "__hash__", _hash_fields)
        _set_default(made, "__repr__", _repr_fields)
        return made

    return make if cls is None else make(cls)


def _has_uncompared_fields(cls) -> bool:
    own = (value for value in vars(cls).values() if isinstance(value, Field))
    inherited = (f for base in cls.__mro__[1:] for f in getattr(base, "__dataclass_fields__", {}).values())
    return any(not f.compare for f in (*own, *inherited))


def _set_default(cls, name, function):
    if name not in vars(cls) or (name == "__hash__" and vars(cls)[name] is None):
        setattr(cls, name, function)


def _equal_fields(self, other):
    if other.__class__ is self.__class__:
        return self.__dict__ == other.__dict__
    return NotImplemented


def _hash_fields(self):
    return hash(tuple(self.__dict__.values()))


def _repr_fields(self):
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"
