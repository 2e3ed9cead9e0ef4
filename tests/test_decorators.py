"""Decorators of the analysed code: a costly one runs for what it does a few times
per run, then is taken as unknown code whose registries may hold anything
(walker.DECORATOR_RUNS, DECORATOR_STEPS); a cheap one always runs."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import analyze, walker
from autograd_lsp.analysis.walker import DECORATOR_RUNS

MANY = DECORATOR_RUNS + 4


def _builders(registry: str = "register") -> str:
    return "".join(f"@{registry}('net{i}')\ndef net{i}():\n    return nn.Linear(3, 1)\n"
                   for i in range(MANY))


_REGISTER = ("import torch\nimport torch.nn as nn\nMODELS = {}\n"
             "def register(name):\n"
             "    def deco(fn):\n        MODELS[name] = fn\n        return fn\n"
             "    return deco\n")


def _if_registered(registry: str) -> str:
    """A nonscalar backward under `if <the last builder> in registry:`."""
    return (f"if 'net{MANY - 1}' in {registry}:\n"
            "    w = torch.randn(3, requires_grad=True)\n"
            "    (w * 2).backward()\n")


def _reported_on_last_line(source: str) -> bool:
    found = [(f.name, f.line) for f in analyze(source)]
    return ("nonscalar-backward", source.count("\n")) in found


@pytest.fixture
def every_decorator_costly(monkeypatch):
    monkeypatch.setattr(walker, "DECORATOR_STEPS", 0)


def test_a_registry_filled_by_many_applications_is_not_known_to_lack_the_last(every_decorator_costly):
    """The last builders are registered by applications past the limit: the registry
    may hold them, so `name in MODELS` is not known false (which would skip the
    branch and what it holds)."""
    assert _reported_on_last_line(_REGISTER + _builders() + _if_registered("MODELS"))


def test_a_registry_object_filled_through_a_decorator_factory(every_decorator_costly):
    """`@MODELS.register("name")`: the factory's inner function holds the registry
    object as `self`; past the limit its dict may hold other builders."""
    source = ("import torch\nimport torch.nn as nn\n"
              "class Registry:\n"
              "    def __init__(self):\n        self.items = {}\n"
              "    def register(self, name):\n"
              "        def deco(fn):\n            self.items[name] = fn\n            return fn\n"
              "        return deco\n"
              "MODELS = Registry()\n"
              + _builders("MODELS.register") + _if_registered("MODELS.items"))
    assert _reported_on_last_line(source)


def test_a_cheap_registry_stays_known():
    """A registry that a cheap decorator fills, however many times, is known: what
    the script builds from it is followed (a model's output backwarded without a
    reduction)."""
    assert _reported_on_last_line(_REGISTER + _builders() + f"model = MODELS['net{MANY - 1}']()\n"
                                  "out = model(torch.randn(4, 3))\n"
                                  "out.backward()\n")
