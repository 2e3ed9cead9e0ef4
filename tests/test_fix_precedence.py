"""Fixes that put a method call after an expression (`.item()`, `.detach()`,
`.mean()`, `.double()`, `.zero_grad()`, ...) keep what the expression meant:
`12.0 / (a + b).data[0]` becomes `12.0 / (a + b).item()`, never
`12.0 / a + b.item()`. The receiver keeps its own text and parentheses; one that
binds looser than `.` and has none gets them. Every fixed code runs here, with
torch, in this process, and computes what the code meant."""
from __future__ import annotations

import ast
import re
import warnings
from types import SimpleNamespace

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.analysis.edits import apply_edits
from autograd_lsp.analysis.rulekit import operand_text, receiver_text
from autograd_lsp.cli import main

torch = pytest.importorskip("torch", reason="torch is a test dependency: pip install -e '.[test]'")


def _run(code: str) -> dict:
    namespace = {"__name__": "__main__"}
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<fixed>", "exec"), namespace)
    return namespace


def _findings(code: str, rule: str) -> list:
    return [f for f in analyze(code) if f.name == rule]


def _fixed(code: str, rule: str, index: int = 0) -> str:
    """`code` with fix `index` of every finding of `rule` applied."""
    findings = _findings(code, rule)
    assert findings, f"{rule} found nothing in:\n{code}"
    edits = [edit for f in findings for edit in f.fixes[index].edits]
    return apply_edits(code, edits)


# -- zero-dim-index (AG114): `x.data[0]` -> `x.item()` ---------------------------------------

ZERO_DIM_PRELUDE = """\
import types
import torch
x = torch.tensor([1.0, 2.0])
a = x.sum()
b = torch.tensor(5.0)
c = torch.tensor(3.0)
flag = True
"""

# (the line as written for torch 0.3, the line --fix must write)
ZERO_DIM = [
    # compound receivers keep their parentheses
    ("r = 12.0 / (a + b).data[0]", "r = 12.0 / (a + b).item()"),
    ("r = 12.0 / (a + b)[0]", "r = 12.0 / (a + b).item()"),
    ("r = (a - b).data[0] ** 2", "r = (a - b).item() ** 2"),
    ("r = (a ** 2).data[0]", "r = (a ** 2).item()"),
    ("r = 2 * (-x.sum()).data[0]", "r = 2 * (-x.sum()).item()"),
    ("r = not (a - c).data[0]", "r = not (a - c).item()"),
    ("r = (x.sum() if flag else x.mean()).data[0] + 1", "r = (x.sum() if flag else x.mean()).item() + 1"),
    ("r = (s := x.sum()).data[0] / 3", "r = (s := x.sum()).item() / 3"),
    ("r = (x.sum() * 2).data[0] if flag else 0", "r = (x.sum() * 2).item() if flag else 0"),
    ("r = [(a + b).data[0], (a * b)[0]]", "r = [(a + b).item(), (a * b).item()]"),
    ("r = ((a + b)).data[0] / 2", "r = ((a + b)).item() / 2"),
    ("r = 12.0 / (a +\n            b).data[0]", "r = 12.0 / (a +\n            b).item()"),
    ("r = (a  # the sum\n     + b).data[0] * 2", "r = (a  # the sum\n     + b).item() * 2"),
    ("r = (x\n     .sum()).data[0]", "r = (x\n     .sum()).item()"),
    # names, calls, attributes and subscripts need none and get none
    ("r = a.data[0]", "r = a.item()"),
    ("r = -(x.sum()).data[0]", "r = -(x.sum()).item()"),
    ("r = x.sum().data[0] * 2", "r = x.sum().item() * 2"),
    ("r = x.sum()[0]", "r = x.sum().item()"),
    ("r = x.sum().data[-1] + 1", "r = x.sum().item() + 1"),
    ("r = (lambda: x.sum())().data[0] * 3", "r = (lambda: x.sum())().item() * 3"),
    ("losses = [x.sum(), x.mean()]\nr = losses[1].data[0] / 2", "losses = [x.sum(), x.mean()]\nr = losses[1].item() / 2"),
    ("s = types.SimpleNamespace(total=x.sum())\nr = s.total.data[0] - 1",
     "s = types.SimpleNamespace(total=x.sum())\nr = s.total.item() - 1"),
]


def _as_numbers(value):
    if isinstance(value, list):
        return [_as_numbers(v) for v in value]
    return float(value)


def _as_torch_03(code: str) -> str:
    """What the line meant under torch 0.3, where a reduction gave a tensor of one
    element: index the value as that 1-element tensor."""
    return re.sub(r"(\.data|\))\[(0|-1)\]", r"\1.reshape(-1)[\2]", code)


@pytest.mark.parametrize("line,expected", ZERO_DIM, ids=[line for line, _ in ZERO_DIM])
def test_zero_dim_index_fix_keeps_the_value(line, expected):
    code = ZERO_DIM_PRELUDE + line + "\n"
    fixed = _fixed(code, "zero-dim-index")
    assert fixed == ZERO_DIM_PRELUDE + expected + "\n"
    with pytest.raises(IndexError):
        _run(code)
    got = _run(fixed)["r"]
    meant = _run(ZERO_DIM_PRELUDE + _as_torch_03(line) + "\n")["r"]
    assert _as_numbers(got) == _as_numbers(meant)
    assert not isinstance(got, torch.Tensor)


def test_zero_dim_index_message_and_title_show_the_fixed_code():
    code = ZERO_DIM_PRELUDE + "r = 12.0 / (a + b).data[0]\n"
    [finding] = _findings(code, "zero-dim-index")
    assert "`(a + b)` is a 0-dim tensor" in finding.message
    assert "read the number with `(a + b).item()`" in finding.message
    assert finding.fixes[0].title == "Use (a + b).item()"
    [finding] = _findings(ZERO_DIM_PRELUDE + "loss = a\nr = loss.data[0]\n", "zero-dim-index")
    assert "read the number with `loss.item()`" in finding.message
    assert finding.fixes[0].title == "Use loss.item()"


def test_zero_dim_index_fix_of_a_plain_name_is_unchanged():
    code = ZERO_DIM_PRELUDE + "loss = a\nprint(loss.data[0])\n"
    [finding] = _findings(code, "zero-dim-index")
    [edit] = finding.fixes[0].edits
    assert edit.new_text == "loss.item()"


def test_check_fix_writes_the_parentheses(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "old.py"
    script.write_text(ZERO_DIM_PRELUDE + "r = 12.0 / (a + b).data[0]\n", encoding="utf-8")
    assert main(["check", "--fix", "--no-cache", str(script)]) == 0
    fixed = script.read_text(encoding="utf-8")
    assert fixed == ZERO_DIM_PRELUDE + "r = 12.0 / (a + b).item()\n"
    assert _run(fixed)["r"] == 12.0 / (3.0 + 5.0)


# -- the helpers themselves ------------------------------------------------------------------

def _at(code: str):
    """An event-like object whose chunk text is `code`."""
    return SimpleNamespace(ctx=SimpleNamespace(source=SimpleNamespace(text=code)))


def _outer(code: str):
    """The outermost `.m` of the expression `code`."""
    return ast.parse(code, mode="eval").body


@pytest.mark.parametrize("code,receiver", [
    ("(await g()).item", "(await g())"),
    ("(lambda: t).x", "(lambda: t)"),
    ("(yield t).x", "(yield t)"),
    ("(a if c else b)[0]", "(a if c else b)"),
    ("(a, b).count", "(a, b)"),
    ("(a\n  .b  # note\n ).c", "(a\n  .b  # note\n )"),
    ("a.b.c", "a.b"),
    ("f(x)(y)", "f(x)"),
    ("(f)(x)", "(f)"),
    ("t[0][1]", "t[0]"),
    ("x.sum()\\\n .item", "x.sum()"),
    ("(1).real", "(1)"),
    ("'{}'.format", "'{}'"),
    ("f'{a.b}'.upper", "f'{a.b}'"),
    ("(é + ü).x", "(é + ü)"),
])
def test_receiver_text_keeps_the_source_and_its_parentheses(code, receiver):
    if code.startswith("(yield") or code.startswith("(await"):
        source = f"async def f():\n    return {code}\n" if "await" in code else f"def f():\n    return {code}\n"
        outer = ast.parse(source).body[0].body[0].value
    else:
        source = code
        outer = _outer(code)
    assert receiver_text(outer, _at(source)) == receiver


@pytest.mark.parametrize("code,receiver", [
    ("(a + b).x", "(a + b)"),
    ("(-a).x", "(-a)"),
    ("(a if c else b).x", "(a if c else b)"),
    ("(lambda: t).x", "(lambda: t)"),
    ("(a := b).x", "(a := b)"),
    ("(a < b).x", "(a < b)"),
    ("(not a).x", "(not a)"),
    ("(a and b).x", "(a and b)"),
    ("(1).real", "(1)"),
    ("a.b.x", "a.b"),
    ("f(a + b).x", "f(a + b)"),
    ("t[a:b].x", "t[a:b]"),
    ("[a, b].x", "[a, b]"),
    ("(a, b).x", "(a, b)"),
])
def test_receiver_text_without_source_parenthesises_what_binds_looser(code, receiver):
    assert receiver_text(_outer(code), None) == receiver


@pytest.mark.parametrize("code,text", [
    ("a + b", "(a + b)"),
    ("-a", "(-a)"),
    ("a if c else b", "(a if c else b)"),
    ("a", "a"),
    ("a.b", "a.b"),
    ("f(x)", "f(x)"),
    ("t[0]", "t[0]"),
])
def test_operand_text(code, text):
    node = _outer(code)
    assert operand_text(node, _at(code)) == text
    assert operand_text(node, None) == text


# -- the other rules whose fixes call a method on an expression ------------------------------

OTHER_PRELUDE = """\
import torch
from torch.autograd.gradcheck import gradcheck
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
flag = True
"""

# (rule, fix index, code after the prelude, the code the fix must write, what must
# hold when the fixed code has run)
OTHER = [
    ("numpy-requires-grad", 0, "p = (w * 2).numpy()\n", "p = (w * 2).detach().numpy()\n",
     "p.tolist() == [2.0, 4.0, 6.0]"),
    ("numpy-requires-grad", 0, "p = (w if flag else v).numpy()\n",
     "p = (w if flag else v).detach().numpy()\n", "p.tolist() == [1.0, 2.0, 3.0]"),
    ("numpy-requires-grad", 0, "p = (w).numpy()\n", "p = (w).detach().numpy()\n",
     "p.tolist() == [1.0, 2.0, 3.0]"),
    ("numpy-requires-grad", 0, "p = w.numpy()\n", "p = w.detach().numpy()\n",
     "p.tolist() == [1.0, 2.0, 3.0]"),
    ("nonscalar-backward", 0, "(w * 3).backward()\n", "(w * 3).mean().backward()\n",
     "w.grad.tolist() == [1.0, 1.0, 1.0]"),
    ("nonscalar-backward", 1, "(w * 3).backward()\n", "(w * 3).sum().backward()\n",
     "w.grad.tolist() == [3.0, 3.0, 3.0]"),
    ("nonscalar-backward", 0, "(w if flag else v).backward()\n",
     "(w if flag else v).mean().backward()\n",
     "torch.allclose(w.grad, torch.full((3,), 1 / 3)) and v.grad is None"),
    ("nonscalar-backward", 2, "(w * 3).backward()\n", "(w * 3).backward(torch.ones_like(w * 3))\n",
     "w.grad.tolist() == [3.0, 3.0, 3.0]"),
    ("grad-none-zero", 0, "(w if flag else v).grad.zero_()\n",
     "if (w if flag else v).grad is not None:\n    (w if flag else v).grad.zero_()\n",
     "w.grad is None"),
    ("grad-none-zero", 1, "(w if flag else v).grad.zero_()\n", "(w if flag else v).grad = None\n",
     "w.grad is None"),
    ("gradcheck-precision", 0, "ok = gradcheck(lambda t: t * 2, (w * 2,))\n",
     "ok = gradcheck(lambda t: t * 2, ((w * 2).double(),))\n", "ok is True"),
    ("gradcheck-precision", 0, "ok = gradcheck(lambda t: t * 2, w * 2)\n",
     "ok = gradcheck(lambda t: t * 2, (w * 2).double())\n", "ok is True"),
    ("gradcheck-precision", 0, "ok = gradcheck(lambda t: t * 2, (-v,))\n",
     "ok = gradcheck(lambda t: t * 2, ((-v).double(),))\n", "ok is True"),
    ("missing-zero-grad", 0,
     "opt = torch.optim.SGD([w], lr=0.0)\n"
     "opt2 = torch.optim.SGD([v], lr=0.0)\n"
     "for i in range(3):\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    (opt if flag else opt2).step()\n",
     "opt = torch.optim.SGD([w], lr=0.0)\n"
     "opt2 = torch.optim.SGD([v], lr=0.0)\n"
     "for i in range(3):\n"
     "    (opt if flag else opt2).zero_grad()\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    (opt if flag else opt2).step()\n",
     "w.grad.tolist() == [2.0, 2.0, 2.0]"),
    ("missing-zero-grad", 0,
     "opt = torch.optim.SGD([w], lr=0.0)\n"
     "opt2 = torch.optim.SGD([v], lr=0.0)\n"
     "def update(o):\n"
     "    o.step()\n"
     "for i in range(3):\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    update(opt if flag else opt2)\n",
     "opt = torch.optim.SGD([w], lr=0.0)\n"
     "opt2 = torch.optim.SGD([v], lr=0.0)\n"
     "def update(o):\n"
     "    o.step()\n"
     "for i in range(3):\n"
     "    (opt if flag else opt2).zero_grad()\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    update(opt if flag else opt2)\n",
     "w.grad.tolist() == [2.0, 2.0, 2.0]"),
    ("missing-zero-grad", 0,
     "for i in range(3):\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    with torch.no_grad():\n"
     "        (w if flag else v).sub_(0.0 * (w if flag else v).grad)\n",
     "for i in range(3):\n"
     "    (w if flag else v).grad = None\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    with torch.no_grad():\n"
     "        (w if flag else v).sub_(0.0 * (w if flag else v).grad)\n",
     "w.grad.tolist() == [2.0, 2.0, 2.0]"),
    ("nonleaf-grad", 0,
     "y = w * 2\n"
     "z = v * 2\n"
     "s = (y * z).sum()\n"
     "s.backward()\n"
     "q = (y if flag else z).grad\n",
     "y = w * 2\n"
     "z = v * 2\n"
     "s = (y * z).sum()\n"
     "(y if flag else z).retain_grad()\n"
     "s.backward()\n"
     "q = (y if flag else z).grad\n",
     "q.tolist() == [8.0, 10.0, 12.0]"),
    ("loss-accumulation", 0,
     "total = 0\n"
     "for i in range(3):\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    total += loss * 2\n",
     "total = 0\n"
     "for i in range(3):\n"
     "    loss = (w * 2).sum()\n"
     "    loss.backward()\n"
     "    total += (loss * 2).detach()\n",
     "total.grad_fn is None and total.item() == 72.0"),
]


def _other_id(case) -> str:
    rule, index, code = case[:3]
    return f"{rule}-fix{index}-{code.splitlines()[-1].strip()}"


@pytest.mark.parametrize("rule,index,code,expected,holds", OTHER, ids=[_other_id(c) for c in OTHER])
def test_method_call_fixes_keep_the_receiver(rule, index, code, expected, holds):
    code = OTHER_PRELUDE + code
    fixed = _fixed(code, rule, index)
    assert fixed == OTHER_PRELUDE + expected
    namespace = _run(fixed)
    assert eval(holds, namespace), f"{holds} is false after:\n{fixed}"


def test_numpy_requires_grad_title_shows_the_fixed_code():
    [finding] = _findings(OTHER_PRELUDE + "p = (w * 2).numpy()\n", "numpy-requires-grad")
    assert "`(w * 2)` requires grad" in finding.message
    assert finding.fixes[0].title == "Detach first: (w * 2).detach().numpy()"


def test_grad_none_zero_message_and_titles_show_the_fixed_code():
    [finding] = _findings(OTHER_PRELUDE + "(w if flag else v).grad.zero_()\n", "grad-none-zero")
    assert "`(w if flag else v).grad` is still None" in finding.message
    assert [f.title for f in finding.fixes] == ["Guard with `if (w if flag else v).grad is not None:`",
                                                "Clear with `(w if flag else v).grad = None`"]


def test_gradcheck_precision_title_shows_the_fixed_code():
    code = OTHER_PRELUDE + "ok = gradcheck(lambda t: t * 2, (w * 2,))\n"
    [finding] = _findings(code, "gradcheck-precision")
    assert finding.fixes[0].title == "Check in float64: (w * 2).double()"


def test_loss_accumulation_message_of_a_stored_expression_shows_working_code():
    code = ("import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "history, n = [], 4\n"
            "for step in range(3):\n"
            "    running = (w * 2).sum()\n"
            "    running.backward()\n"
            "    history.append(running / n)\n")
    [finding] = _findings(code, "loss-accumulation")
    assert "keep `(running / n).item()` or `(running / n).detach()`" in finding.message
    namespace = _run(code + "shown = (running / n).item()\n")
    assert namespace["shown"] == pytest.approx(namespace["running"].item() / 4)


# -- nonleaf-grad (AG204): `retain_grad()` goes where the tensor already exists ----------------

HOOKED = ("import torch\n"
          "import torch.nn as nn\n"
          "torch.manual_seed(0)\n"
          "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
          "kept = {}\n"
          "def save(module, inputs, output):\n"
          "    kept['act'] = output\n"
          "model[0].register_forward_hook(save)\n"
          "x = torch.randn(3, 4)\n")


def test_nonleaf_grad_fix_keeps_the_gradient_of_an_activation_made_earlier():
    code = HOOKED + "out = model(x)\nout.sum().backward()\ngrads = kept['act'].grad\n"
    fixed = _fixed(code, "nonleaf-grad")
    assert "kept['act'].retain_grad()\nout.sum().backward()" in fixed
    assert _run(fixed)["grads"].shape == (3, 8)


def test_nonleaf_grad_offers_no_fix_when_the_backward_statement_makes_the_tensor():
    # The line before `model(x).sum().backward()` has no `kept['act']` yet (a KeyError),
    # or an older activation of another forward.
    code = HOOKED + "model(x).sum().backward()\ngrads = kept['act'].grad\n"
    [finding] = _findings(code, "nonleaf-grad")
    assert finding.fixes == ()


# -- double-backward (AG102): a recurrent state carried from one batch to the next -------------

def test_double_backward_fix_detaches_an_lstm_state_after_it_is_bound_again():
    code = ("import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "lstm, head = nn.LSTM(3, 5, batch_first=True), nn.Linear(5, 1)\n"
            "opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)\n"
            "hidden = (torch.zeros(1, 2, 5), torch.zeros(1, 2, 5))\n"
            "for step in range(3):\n"
            "    x, y = torch.randn(2, 4, 3), torch.randn(2, 4, 1)\n"
            "    out, hidden = lstm(x, hidden)\n"
            "    loss = (head(out) - y).pow(2).mean()\n"
            "    opt.zero_grad()\n"
            "    loss.backward()\n"
            "    opt.step()\n")
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _run(code)
    [finding] = _findings(code, "double-backward")
    assert (finding.line, finding.column) == (12, 4)
    assert finding.message.startswith("`hidden` is passed back in with the previous iteration's graph")
    fixed = _fixed(code, "double-backward")
    assert "    out, hidden = lstm(x, hidden)\n    hidden = tuple(s.detach() for s in hidden)\n" in fixed
    assert _run(fixed)["step"] == 2
    assert not _findings(fixed, "double-backward")
