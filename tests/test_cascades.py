"""After a statement that surely raises, what the same call would go on to do is
not reported: torch stops at the first error. Each case is run with torch to
prove where it stops."""
from __future__ import annotations

import traceback

import pytest
import torch  # noqa: F401 - the cases run with it

from autograd_lsp.analysis import Analyzer

# The optimizer refuses the non-leaf: the loop below, which would backward twice
# through `start`'s graph, never runs.
NON_LEAF_THEN_LOOP = '''import torch

def fit(target, steps=3):
    start = torch.randn(4, requires_grad=True) * 0.1
    opt = torch.optim.SGD([start], lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        loss = (start - target).pow(2).sum()
        loss.backward()
        opt.step()
    return start

fit(torch.zeros(4))
'''

# Two in-place writes into a parameter: the first raises, the second never runs,
# but it is the same mistake, to fix as well.
TWO_WRITES = '''import torch
import torch.nn as nn

def fill(weight):
    weight[:, 0] = 1.0
    weight[:, 1] = 2.0

layer = nn.Linear(3, 2)
fill(layer.weight)
'''

# The raise is in a branch whose test is unknown: what follows may run.
CONDITIONAL = '''import sys
import torch

def fit(target, steps=2):
    start = torch.randn(4, requires_grad=True) * 0.1
    if len(sys.argv) > 5:
        opt = torch.optim.SGD([start], lr=0.1)
    loss = (start - target).pow(2)
    loss.backward()

fit(torch.zeros(4))
'''

# At module level the next statement is still checked (a notebook's next cell runs).
MODULE_LEVEL = '''import torch
w = torch.randn(3, requires_grad=True)
w[0] = 1.0
y = (w * 2).sum()
y.backward()
y.backward()
'''


def found(source: str) -> list:
    analyzer = Analyzer()
    out = [(f.name, f.line) for f in analyzer.analyze(source)]
    assert not analyzer.internal_errors
    return out


def raising_line(source: str) -> int:
    with pytest.raises(Exception) as info:
        exec(compile(source, "case.py", "exec"), {"__name__": "__main__"})
    return [frame.lineno for frame in traceback.extract_tb(info.tb) if frame.filename == "case.py"][-1]


def test_the_loop_after_a_refused_optimizer_is_not_reported():
    assert raising_line(NON_LEAF_THEN_LOOP) == 5
    assert found(NON_LEAF_THEN_LOOP) == [("nonleaf-to-optimizer", 5)]


def test_the_same_mistake_after_a_raise_is_still_reported():
    assert raising_line(TWO_WRITES) == 5
    # (Line 9, the call that passed the parameter, is reported too: see test_call_sites.)
    assert [line for name, line in found(TWO_WRITES) if name == "inplace-leaf"] == [5, 6, 9]


def test_a_raise_under_an_unknown_test_does_not_silence_what_follows():
    names = [name for name, line in found(CONDITIONAL)]
    assert "nonleaf-to-optimizer" in names and "nonscalar-backward" in names


def test_module_level_raises_leave_the_next_statements_checked():
    names = [name for name, line in found(MODULE_LEVEL)]
    assert "inplace-leaf" in names and "double-backward" in names


# A helper called once per window by a loop raises at its second statement: what it
# goes on to do in that pass never runs; the code after the caller's loop (which
# may run no pass) is still checked.
IN_A_LOOP_PASS = '''import torch
import torch.nn as nn

encoder, decoder = nn.Linear(6, 2), nn.Linear(2, 6)

def refine(x, steps=3):
    z = encoder(x)
    z.requires_grad = True
    opt = torch.optim.Adam([z], lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        residual = (decoder(z) - x).pow(2).mean()
        residual.backward()
        opt.step()
    return residual.item()

def scores(windows):
    out = [refine(w) for w in windows]
    w = torch.randn(3, requires_grad=True)
    w.numpy()
    return out

scores(torch.randn(4, 6))
'''


def test_a_raise_in_a_loop_pass_stops_that_pass_only():
    assert raising_line(IN_A_LOOP_PASS) == 8
    assert sorted(found(IN_A_LOOP_PASS)) == [("numpy-requires-grad", 20), ("requires-grad-nonleaf", 8)]
