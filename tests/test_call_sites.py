"""An error raised inside a helper because of what its caller passed is also
reported at the call. Each case is run with torch to prove the call raises."""
from __future__ import annotations

import traceback

import pytest
import torch  # noqa: F401 - the cases run with it

from autograd_lsp.analysis import Analyzer

# The helper is right; the second call gives it a gradient without a graph.
SECOND_DERIVATIVE = '''import torch

def derivative(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))[0]

x = torch.linspace(0, 1, 5).reshape(-1, 1).requires_grad_()
u = torch.sin(x)
u_x = derivative(u, x)
u_xx = derivative(u_x, x)
'''

# The helper builds its own non-scalar: whoever calls it, it raises. Not repeated
# at the call.
OWN_TENSOR = '''import torch

def step(w):
    loss = w * 2
    loss.backward()

step(torch.randn(3, requires_grad=True))
'''


def findings(source: str, locale: str = "en") -> list:
    from autograd_lsp.analysis import Settings
    analyzer = Analyzer()
    out = analyzer.analyze(source, Settings(locale=locale))
    assert not analyzer.internal_errors
    return out


def traceback_lines(source: str) -> list:
    with pytest.raises(RuntimeError) as info:
        exec(compile(source, "case.py", "exec"), {"__name__": "__main__"})
    return [frame.lineno for frame in traceback.extract_tb(info.tb) if frame.filename == "case.py"]


def test_the_call_that_passes_the_gradient_is_reported_too():
    assert traceback_lines(SECOND_DERIVATIVE) == [9, 4]
    out = [(f.name, f.line, f.message) for f in findings(SECOND_DERIVATIVE)]
    assert [(name, line) for name, line, _ in out] == [("higher-order-no-create-graph", 4),
                                                       ("higher-order-no-create-graph", 9)]
    assert out[1][2].startswith("in `derivative`, called here: ")
    assert out[1][2].endswith(out[0][2])


def test_the_call_site_message_follows_the_locale():
    messages = [f.message for f in findings(SECOND_DERIVATIVE, "zh") if f.line == 9]
    assert messages and messages[0].startswith("在此处调用的 `derivative` 中：")


def test_a_helper_wrong_on_its_own_is_reported_only_inside():
    assert traceback_lines(OWN_TENSOR) == [7, 5]
    assert [(f.name, f.line) for f in findings(OWN_TENSOR)] == [("nonscalar-backward", 5)]


# A training step that backwards and steps without clearing, called by the loop:
# said at the backward (the line to mend) and at the loop's call (where it adds up).
HELPER_STEP = '''import torch
import torch.nn as nn

def train_step(model, optimizer, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]:
        train_step(model, optimizer, x, y)
'''


def test_a_helper_step_without_clearing_is_said_at_the_loops_call_too():
    found = [(f.code, f.line, f.message) for f in Analyzer().analyze(HELPER_STEP)]
    assert [(code, line) for code, line, _ in found] == [("AG201", 6), ("AG201", 13)]
    assert found[1][2].startswith("in `train_step`, called here: gradients are never cleared in this loop")
