"""The ways people import torch all resolve to the same qualified names."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import Analyzer, analyze
from autograd_lsp.analysis.facts import TorchName


def qualname_of(imports: str, expr: str) -> str | None:
    """The torch name `expr` stands for after `imports`, as the analysis sees it."""
    analyzer = Analyzer()
    analyzer.analyze(f"import torch\n{imports}\nvalue = {expr}\n")
    found = analyzer.facts_at(3, 1)
    assert found is not None and found[0] == "value"
    return found[1].qualname if isinstance(found[1], TorchName) else None


@pytest.mark.parametrize("imports,expr,qualname", [
    ("import torch", "torch.randn", "torch.randn"),
    ("import torch as T", "T.randn", "torch.randn"),
    ("from torch import nn, optim, tensor", "nn.Linear", "torch.nn.Linear"),
    ("from torch import nn, optim, tensor", "optim.SGD", "torch.optim.SGD"),
    ("from torch import nn, optim, tensor", "tensor", "torch.tensor"),
    ("from torch.autograd import grad, gradcheck", "grad", "torch.autograd.grad"),
    ("from torch.autograd import grad, gradcheck", "gradcheck", "torch.autograd.gradcheck"),
    ("from torch.autograd.gradcheck import gradcheck", "gradcheck", "torch.autograd.gradcheck"),
    ("import torch.nn.functional as F", "F.mse_loss", "torch.nn.functional.mse_loss"),
    ("from torch.nn import functional as F", "F.relu", "torch.nn.functional.relu"),
    ("import torch.nn as nn", "nn.MSELoss", "torch.nn.MSELoss"),
    ("import torch.nn", "torch.nn.Linear", "torch.nn.Linear"),
    ("import numpy as np", "np.zeros", None),
    ("import os", "tensor", None),
])
def test_qualified_names(imports, expr, qualname):
    assert qualname_of(imports, expr) == qualname


@pytest.mark.parametrize("header,make", [
    ("import torch", "torch.tensor"),
    ("import torch as T", "T.tensor"),
    ("from torch import tensor", "tensor"),
])
def test_rules_follow_aliases(header, make):
    source = f"{header}\nt = {make}([1, 2], requires_grad=True)\n"
    assert [f.code for f in analyze(source)] == ["AG104"]


def test_a_local_name_hides_an_import():
    source = "from torch import tensor\ndef tensor(*a, **k):\n    return None\nt = tensor([1, 2], requires_grad=True)\n"
    # the local function shadows torch.tensor at module level
    assert analyze(source) == [] or all(f.code != "AG104" for f in analyze(source))


def test_torch_imported_in_a_try_block():
    source = "try:\n    import torch\nexcept ImportError:\n    torch = None\nt = torch.arange(3, requires_grad=True)\n"
    assert [f.code for f in analyze(source)] == ["AG104"]
