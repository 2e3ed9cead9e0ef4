"""What one function learns from the rest of the file: the models and optimizers
the module builds, and the tensors the file's calls pass it; kept right across
edits by a long-lived Analyzer."""
from __future__ import annotations

from autograd_lsp.analysis import Analyzer, analyze

HELPER = """\
import torch
def apply_gradients(out):
    out.backward()
x = torch.randn(3, requires_grad=True)
apply_gradients({arg})
"""


def codes(source: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in analyze(source)]


def test_a_helper_sees_what_its_callers_pass():
    assert ("AG101", 3) in codes(HELPER.format(arg="x * 2"))
    assert codes(HELPER.format(arg="(x * 2).sum()")) == []


def test_callers_that_disagree_make_the_parameter_unknown():
    source = HELPER.format(arg="(x * 2).sum()") + "apply_gradients(some_tensor)\n"
    assert codes(source) == []


def test_edits_at_the_call_site_update_the_function_incrementally():
    analyzer = Analyzer()
    versions = [HELPER.format(arg=a) for a in ("x * 2", "(x * 2).sum()", "x * 2", "x[0]")]
    for text in versions:
        assert analyzer.analyze(text) == Analyzer().analyze(text)
        assert not analyzer.internal_errors


def test_functions_see_the_optimizer_the_module_builds_after_them():
    source = """\
import torch
from torch import nn
def train(batches):
    for xb, yb in batches:
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    assert ("AG201", 6) in codes(source)
    # a global rebound to another optimizer is not trusted
    assert ("AG201", 6) not in codes(source + "opt = make_optimizer()\n")


def test_a_change_in_a_helpers_helper_reaches_a_function_run_on_its_own():
    """`report()` is never called, so it runs on its own; it calls `show()`, which
    calls `evaluate()`. Fixing `evaluate` must clear the finding a long-lived
    Analyzer had, as a fresh one would."""
    before = """\
import torch
def evaluate(x):
    (x * 2).backward()
def show(x):
    return evaluate(x)
def report():
    w = torch.ones(3, requires_grad=True)
    show(w)
"""
    after = before.replace("(x * 2).backward()", "(x * 2).sum().backward()")
    analyzer = Analyzer()
    assert analyzer.analyze(before) == analyze(before) != []
    assert analyzer.analyze(after) == analyze(after) == []


def test_a_method_no_one_calls_may_run_after_a_backward():
    # A training hook (Lightning's on_before_optimizer_step) is called by a framework
    # after backward: its module's parameters may hold gradients, so reading them
    # is no AG103. A tensor the function makes itself still has no gradient.
    source = '''import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(32, 2)

    def on_before_optimizer_step(self, optimizer):
        for p in self.parameters():
            copy = p.detach().clone()
            copy.grad = p.grad.clone()

    def fresh(self):
        w = torch.zeros(3, requires_grad=True)
        return w.grad.clone()
'''
    found = [(f.code, f.line) for f in analyze(source)]
    assert found == [("AG103", 17)]
