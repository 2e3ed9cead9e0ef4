"""Code written for torch 0.3: what the analysis knows of its idioms, and
`autograd-lsp check --fix` bringing a whole old-style training script to code
that runs on today's torch (run here, with torch, in this process)."""
from __future__ import annotations

import warnings

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.cli import main

torch = pytest.importorskip("torch", reason="torch is a test dependency: pip install -e '.[test]'")

OLD_RULES = {"removed-backward-keyword", "zero-dim-index", "grad-mode-not-called", "volatile-noop",
             "method-not-called"}

OLD_SCRIPT = '''\
"""A classifier of three blobs of points, written the torch 0.3 way."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
centers = torch.tensor([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]])


def make_blobs(n):
    labels = torch.randint(0, 3, (n,))
    return centers[labels] + 0.5 * torch.randn(n, 2), labels


train_x, train_y = make_blobs(96)
test_x, test_y = make_blobs(48)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(2, 16)
        self.drop = nn.Dropout(p=0.2)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.drop(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
history = []


def train(epoch, batch_size=16):
    model.train()
    for start in range(0, len(train_x), batch_size):
        data = Variable(train_x[start:start + batch_size])
        target = Variable(train_y[start:start + batch_size])
        optimizer.zero_grad
        output = model(data)
        loss = F.nll_loss(output, target)
        # keep the predictions sharp: a second loss on the same forward pass
        sharpness = 0.01 * output.exp().pow(2).sum(1).mean()
        loss.backward(retain_variables=True)
        sharpness.backward()
        optimizer.step()
        history.append(loss.data[0])
    print('epoch {} loss {:.4f}'.format(epoch, history[-1]))


def test():
    model.eval
    data, target = Variable(test_x, volatile=True), Variable(test_y)
    output = model(data)
    test_loss = F.nll_loss(output, target, size_average=False).data[0] / len(test_x)
    pred = output.data.max(1, keepdim=True)[1]
    correct = pred.eq(target.data.view_as(pred)).sum()
    print('test loss {:.4f}, accuracy {}/{}'.format(test_loss, correct, len(test_x)))
    return output, test_loss, correct


def predict(points):
    with torch.no_grad:
        return model(Variable(points)).data.max(1)[1]


for epoch in range(1, 4):
    train(epoch)
    output, test_loss, correct = test()
labels = predict(centers)
'''

# What the fixes change, old text -> new text, in the order they appear.
CHANGES = [
    ("        optimizer.zero_grad\n", "        optimizer.zero_grad()\n"),
    ("loss.backward(retain_variables=True)", "loss.backward(retain_graph=True)"),
    ("history.append(loss.data[0])", "history.append(loss.item())"),
    ("    model.eval\n", "    model.eval()\n"),
    ('''\
    data, target = Variable(test_x, volatile=True), Variable(test_y)
    output = model(data)
    test_loss = F.nll_loss(output, target, size_average=False).data[0] / len(test_x)
    pred = output.data.max(1, keepdim=True)[1]
    correct = pred.eq(target.data.view_as(pred)).sum()
    print('test loss {:.4f}, accuracy {}/{}'.format(test_loss, correct, len(test_x)))
    return output, test_loss, correct
''', '''\
    data, target = Variable(test_x), Variable(test_y)
    with torch.no_grad():
        output = model(data)
        test_loss = F.nll_loss(output, target, size_average=False).item() / len(test_x)
        pred = output.data.max(1, keepdim=True)[1]
        correct = pred.eq(target.data.view_as(pred)).sum()
        print('test loss {:.4f}, accuracy {}/{}'.format(test_loss, correct, len(test_x)))
        return output, test_loss, correct
'''),
    ("    with torch.no_grad:\n", "    with torch.no_grad():\n"),
]


def _expected_fix() -> str:
    text = OLD_SCRIPT
    for old, new in CHANGES:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _run(code: str):
    """Run `code` as a script; (exception or None, warning texts, globals)."""
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<script>", "exec"), namespace)
        except Exception as exc:  # the script's own failure is what is inspected
            return exc, [str(w.message) for w in caught], namespace
    return None, [str(w.message) for w in caught], namespace


def test_every_old_idiom_of_the_script_is_found():
    found = {(f.line, f.name) for f in analyze(OLD_SCRIPT)}
    lines = OLD_SCRIPT.splitlines()
    expected = {
        (lines.index("        optimizer.zero_grad") + 1, "method-not-called"),
        (lines.index("        loss.backward(retain_variables=True)") + 1, "removed-backward-keyword"),
        (lines.index("        history.append(loss.data[0])") + 1, "zero-dim-index"),
        (lines.index("    model.eval") + 1, "method-not-called"),
        (lines.index("    data, target = Variable(test_x, volatile=True), Variable(test_y)") + 1,
         "volatile-noop"),
        (lines.index("    test_loss = F.nll_loss(output, target, size_average=False).data[0] "
                     "/ len(test_x)") + 1, "zero-dim-index"),
        (lines.index("    with torch.no_grad:") + 1, "grad-mode-not-called"),
    }
    assert found == expected


def test_check_fix_brings_the_script_up_to_date(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "blobs.py"
    script.write_text(OLD_SCRIPT, encoding="utf-8")

    # As written, it stops at the first backward.
    error, _, _ = _run(OLD_SCRIPT)
    assert isinstance(error, TypeError) and "retain_variables" in str(error)

    code = main(["check", "--fix", "--no-cache", str(script)])
    out = capsys.readouterr().out
    fixed = script.read_text(encoding="utf-8")
    assert fixed == _expected_fix()
    assert out.count(": fixed AG") == 7
    assert code == 0 and not analyze(fixed)

    error, caught, namespace = _run(fixed)
    assert error is None, f"{type(error).__name__}: {error}"
    assert not [w for w in caught if "volatile" in w]
    history = namespace["history"]
    assert len(history) == 18 and all(isinstance(v, float) for v in history)
    assert history[-1] < history[0]
    # Evaluated in eval mode without a graph; the predictions work.
    assert not namespace["model"].training
    assert namespace["output"].grad_fn is None
    assert namespace["labels"].tolist() == [0, 1, 2]


# -- what the analysis knows of old idioms ---------------------------------------------------

def test_variable_is_a_new_leaf_cut_from_the_graph():
    # `Variable(t)` of a tensor in a graph makes a leaf that does not require grad:
    # backward through it raises, and the analysis says so.
    code = ("import torch\n"
            "from torch.autograd import Variable\n"
            "w = Variable(torch.randn(3, 2), requires_grad=True)\n"
            "x = Variable(torch.randn(3, 2) * w)\n"
            "x.sum().backward()\n"
            "(w * 2).sum().backward()\n")
    assert [(f.line, f.name) for f in analyze(code)] == [(5, "no-grad-fn")]
    error, _, _ = _run(code)
    assert isinstance(error, RuntimeError) and "does not require grad" in str(error)


def test_a_reducing_loss_is_0_dim_whatever_its_inputs():
    code = ("import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "def log(out, y):\n"
            "    criterion = nn.CrossEntropyLoss()\n"
            "    summing = nn.MSELoss(size_average=False)\n"
            "    per_element = nn.MSELoss(reduce=False)\n"
            "    print(criterion(out, y).data[0])\n"
            "    print(F.nll_loss(out, y, size_average=False).data[0])\n"
            "    print(summing(out, y)[0])\n"
            "    print(per_element(out, y)[0])\n"
            "    print(F.mse_loss(out, y, reduction='none')[0], F.mse_loss(out, y, reduce=False)[0])\n")
    assert [f.line for f in analyze(code) if f.name == "zero-dim-index"] == [7, 8, 9]


def test_old_losses_per_element_keep_their_first_element():
    code = ("import torch\n"
            "import torch.nn as nn\n"
            "loss_fn = nn.MSELoss(reduce=False)\n"
            "per_sample = loss_fn(torch.randn(4, 1), torch.randn(4, 1))\n"
            "print(per_sample.data[0])\n")
    assert not [f for f in analyze(code) if f.name in OLD_RULES]
    error, _, _ = _run(code)
    assert error is None
