"""Incremental analysis equals analysis from scratch, over random edit sequences.

One long-lived Analyzer sees every version of a document, reusing parses and
chunk results; after each edit its findings must equal those of a fresh
Analyzer on the same text, and the analysis must not have raised.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from autograd_lsp.analysis.engine import Analyzer

MODULE_LOOP = '''import torch
import torch.nn as nn
from torch import optim

x = torch.randn(3, requires_grad=True)
w = torch.tensor([1.0, 2.0], requires_grad=True)
model = nn.Linear(3, 1)
optimizer = optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()


def make_batch(n=8):
    inputs = torch.randn(n, 3)
    targets = torch.randn(n, 1)
    return inputs, targets


for step in range(5):
    inputs, targets = make_batch()
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if step % 2 == 0:
        print(step, loss.item())

y = x * 2
y.sum().backward()
print(x.grad)
'''

FUNCTIONS = '''"""Helpers and a training step."""
import torch as T
import torch.nn.functional as F


def scaled_loss(pred, target, scale=2.0):
    diff = pred - target
    loss = (diff ** 2).mean() * scale
    return loss


def train_step(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


class Net(T.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = T.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


@T.no_grad()
def evaluate(model, inputs):
    return model(inputs).argmax(-1)


if __name__ == "__main__":
    a = T.ones(2, 2, requires_grad=True)
    b = (a + 2) ** 2
    g = T.autograd.grad(b, a)
'''

TUTORIAL = '''import torch
W = torch.randn(2, 3, requires_grad=True)
v = torch.tensor([1.0, 0.0, -1.0])
out = torch.matmul(W, v)
out.backward()
b = torch.tensor(0.0, requires_grad=True)
for i in range(10):
    pred = W @ v + b
    loss = (pred - 1.0) ** 2
    loss.backward()
    with torch.no_grad():
        W -= 0.01 * W.grad
        W.grad.zero_()
        b.grad = None
# trailing comment
'''

SEEDS = [MODULE_LOOP, FUNCTIONS, TUTORIAL]

BUGGY = "x = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
CHARACTERS = st.sampled_from(list("x (),:=.'\"#\n\\@") + [" ", "    "])
SNIPPETS = st.sampled_from([BUGGY, "y = x * 2\ny.backward()\n", "    loss.backward()\n",
                            "def f(:\n", '    """\n', "import torch as torch\n",
                            "torch.set_default_dtype(torch.float64)\n", "del x\n"])


def insert_char(text, where, piece):
    pos = int(where * len(text))
    return text[:pos] + piece + text[pos:]


def delete_char(text, where, _):
    pos = int(where * len(text))
    return text[:pos] + text[pos + 1:]


def _line_bounds(text, where):
    lines = text.splitlines(keepends=True)
    index = min(int(where * len(lines)), max(len(lines) - 1, 0))
    return lines, index


def delete_line(text, where, _):
    lines, index = _line_bounds(text, where)
    return "".join(lines[:index] + lines[index + 1:])


def duplicate_line(text, where, _):
    lines, index = _line_bounds(text, where)
    return "".join(lines[:index + 1] + lines[index:])


def insert_line(text, where, piece):
    lines, index = _line_bounds(text, where)
    return "".join(lines[:index] + [piece if piece.endswith("\n") else piece + "\n"] + lines[index:])


def break_line(text, where, _):
    """An unclosed bracket at the end of a line, as when typing a call."""
    lines, index = _line_bounds(text, where)
    if not lines:
        return text
    lines[index] = lines[index].rstrip("\n") + " + (\n"
    return "".join(lines)


EDITS = st.one_of(
    st.tuples(st.just(insert_char), st.floats(0, 1), CHARACTERS),
    st.tuples(st.just(delete_char), st.floats(0, 1), st.none()),
    st.tuples(st.just(delete_line), st.floats(0, 1), st.none()),
    st.tuples(st.just(duplicate_line), st.floats(0, 1), st.none()),
    st.tuples(st.just(insert_line), st.floats(0, 1), SNIPPETS),
    st.tuples(st.just(break_line), st.floats(0, 1), st.none()),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS), st.lists(st.tuples(EDITS, st.booleans()), min_size=1, max_size=12))
def test_incremental_findings_equal_findings_from_scratch(seed, edits):
    analyzer = Analyzer()
    text = seed
    assert analyzer.analyze(text) == Analyzer().analyze(text)
    for (edit, where, piece), repair in edits:
        before = text
        text = edit(text, where, piece)
        assert analyzer.analyze(text) == Analyzer().analyze(text), text
        if repair:
            # Undo it, as when a half-typed line is finished or deleted.
            text = before
            assert analyzer.analyze(text) == Analyzer().analyze(text), text
    assert analyzer.internal_errors == []


def test_results_reused_after_chunks_above_them_moved():
    """Chunk results are cached without the chunk's index, so tensor ids must not
    depend on it: with ids made from the index, the reused `x` chunk (computed at
    index 2) and the re-run `z` chunk (now at index 2) shared a tensor id, and
    `z.requires_grad_()` overwrote the facts of `x`."""
    source = ("import torch\n"
              "print(0)\n"
              "x = torch.randn(3, requires_grad=True)\n"
              "z = torch.tensor(1.0)\n"
              "z.requires_grad_()\n"
              "y = x * 2\n"
              "y.backward()\n")
    analyzer = Analyzer()
    analyzer.analyze(source)
    edited = source.replace("print(0)\n", "").replace("tensor(1.0)", "tensor(2.0)")
    assert [f.code for f in analyzer.analyze(edited)] == ["AG101"]
    assert analyzer.analyze(edited) == Analyzer().analyze(edited)
    assert analyzer.internal_errors == []


def test_a_broken_and_repaired_line_reuses_earlier_results():
    analyzer = Analyzer()
    first = analyzer.analyze(FUNCTIONS)
    broken = FUNCTIONS.replace("    diff = pred - target\n", "    diff = pred - (target\n")
    analyzer.analyze(broken)
    assert analyzer.analyze(FUNCTIONS) == first
