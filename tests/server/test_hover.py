"""Hovers: autograd API names, tensor facts, codes in `# noqa:` comments."""
from __future__ import annotations

import pytest
from lsprotocol import types

from autograd_lsp.analysis import rule_by_key
from autograd_lsp.server.hover_docs import DOCS, api_doc
from tests.server.session import diagnostics, open_document, session

URI = "file:///tmp/autograd_lsp_test/hover.py"
SOURCE = """\
import torch
from torch.autograd import grad, gradcheck
x = torch.randn(3, requires_grad=True)
w = torch.zeros(3).requires_grad_()
y = (x * w).sum()
y.backward(retain_graph=True, create_graph=False)
g = torch.autograd.grad(y, x)
h = grad(y, x)
print(x.grad, y.grad_fn, x.is_leaf, x.requires_grad)
y.retain_grad()
d = x.detach()
with torch.no_grad():
    pass
with torch.inference_mode():
    pass
with torch.enable_grad():
    pass
opt = torch.optim.SGD([x], lr=0.1)
opt.zero_grad()
opt.step()
v = y.item()
a = d.numpy()
gradcheck(torch.sin, (x,))
for step in range(3):
    grad_norm = 0  # grad is only a word here
z = x * 2
z.backward()  # noqa: AG101, AG2
"""

# (line, text to hover, which occurrence on the line) -> hover_docs key
API_CASES = [
    (6, "backward", 0, "backward"), (6, "retain_graph", 0, "retain_graph"),
    (6, "create_graph", 0, "create_graph"), (7, "grad", 1, "torch.autograd.grad"),
    (8, "grad", 0, "torch.autograd.grad"), (9, "grad", 0, "grad"), (9, "grad_fn", 0, "grad_fn"),
    (9, "is_leaf", 0, "is_leaf"), (9, "requires_grad", 0, "requires_grad"),
    (3, "requires_grad", 0, "requires_grad"), (4, "requires_grad_", 0, "requires_grad_"),
    (10, "retain_grad", 0, "retain_grad"), (11, "detach", 0, "detach"), (12, "no_grad", 0, "no_grad"),
    (14, "inference_mode", 0, "inference_mode"), (16, "enable_grad", 0, "enable_grad"),
    (19, "zero_grad", 0, "zero_grad"), (20, "step", 0, "step"), (21, "item", 0, "item"),
    (22, "numpy", 0, "numpy"), (23, "gradcheck", 0, "gradcheck"),
]


def position_of(line: int, needle: str, occurrence: int = 0) -> types.Position:
    text = SOURCE.splitlines()[line - 1]
    column = -1
    for _ in range(occurrence + 1):
        column = text.index(needle, column + 1)
    # Point into the middle of the word, as a mouse would.
    return types.Position(line - 1, column + len(needle) // 2)


async def hover_at(client, position: types.Position, uri: str = URI) -> str | None:
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position))
    return None if result is None else result.contents.value


def test_every_api_name_of_the_issue_has_a_doc():
    wanted = {"backward", "torch.autograd.grad", "grad", "grad_fn", "is_leaf", "requires_grad",
              "requires_grad_", "retain_graph", "create_graph", "retain_grad", "detach", "no_grad",
              "inference_mode", "enable_grad", "zero_grad", "step", "item", "numpy", "gradcheck"}
    assert wanted <= set(DOCS["en"])
    assert {key for _, _, _, key in API_CASES} == wanted
    for key in wanted:
        lines = DOCS["en"][key].splitlines()
        assert "```python" in DOCS["en"][key], key     # carries a tiny example
        assert 4 <= len(lines) <= 12, key


@pytest.mark.parametrize("locale", [None, "zh-CN"])
async def test_api_names(locale):
    expected_locale = "zh" if locale else "en"
    async with session("vscode", locale=locale) as client:
        open_document(client, URI, SOURCE)
        await diagnostics(client, URI, until=lambda items: True)
        for line, needle, occurrence, key in API_CASES:
            value = await hover_at(client, position_of(line, needle, occurrence))
            assert value == api_doc(key, expected_locale), (line, needle)


async def test_names_that_are_not_torch_get_no_api_doc():
    async with session("vscode") as client:
        open_document(client, URI, SOURCE)
        for line, needle in [(24, "step"), (25, "grad"), (25, "grad_norm")]:
            value = await hover_at(client, position_of(line, needle))
            assert value is None or "optimizer" not in value and "Tensor.grad" not in value


async def test_tensor_facts():
    async with session("vscode") as client:
        open_document(client, URI, SOURCE)
        # Facts are those of a name where it is read.
        value = await hover_at(client, position_of(11, "x"))
        assert "`x`" in value
        assert "requires grad: yes" in value and "leaf: yes" in value
        assert "float32" in value and "`(3,)`" in value
        assert "set by a backward" in value
        value = await hover_at(client, position_of(27, "z"))
        assert "leaf: no" in value and "MulBackward0" in value
        # where a name is defined, too
        value = await hover_at(client, position_of(3, "x"))
        assert "requires grad: yes" in value and "still None" in value


async def test_the_backward_graph_is_drawn():
    source = "import torch\nx = torch.tensor([1.0], requires_grad=True)\ny = x ** 2 + x * 3\ny\n"
    async with session("vscode") as client:
        open_document(client, URI, source)
        value = await hover_at(client, types.Position(line=3, character=0))
        assert "y: AddBackward0" in value and "PowBackward0" in value and "x (leaf)" in value


async def test_a_freed_graph_is_shown():
    source = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny\n"
    async with session("vscode") as client:
        open_document(client, URI, source)
        freed = await hover_at(client, types.Position(line=4, character=0))
        assert "freed by an earlier `backward()`" in freed
        before = await hover_at(client, types.Position(line=3, character=0))
        assert "freed" not in before


async def test_tensor_facts_in_chinese():
    async with session("vscode", locale="zh-Hans") as client:
        open_document(client, URI, SOURCE)
        value = await hover_at(client, position_of(11, "x"))
        assert "需要梯度: 是" in value and "叶子张量: 是" in value


async def test_noqa_code_shows_the_rule_explanation():
    async with session("vscode") as client:
        open_document(client, URI, SOURCE)
        value = await hover_at(client, position_of(27, "AG101"))
        rule = rule_by_key("AG101")
        assert rule.name in value and rule.explanation["en"] in value
        value = await hover_at(client, position_of(27, "AG2"))
        assert value.startswith("`# noqa: AG2` suppresses:")
        assert all(r in value for r in ("AG201",))


async def test_nothing_on_blank_space_and_comments():
    async with session("vscode") as client:
        open_document(client, URI, SOURCE)
        assert await hover_at(client, types.Position(12, 0)) is None
        assert await hover_at(client, position_of(25, "only")) is None


# -- the idioms of torch < 0.4 -----------------------------------------------------------------

OLD_URI = "file:///tmp/autograd_lsp_test/hover_old.py"
OLD_SOURCE = """\
import torch
from torch.autograd import Variable
x = Variable(torch.randn(3), volatile=True)
w = torch.autograd.Variable(torch.randn(3), requires_grad=True)
loss = (w * x).sum()
print(loss.data, x.volatile)
summary = tf.Variable(0)
"""
OLD_CASES = [(3, "Variable", "Variable"), (3, "volatile", "volatile"), (4, "Variable", "Variable"),
             (6, "data", "data"), (6, "volatile", "volatile")]


def old_position(line: int, needle: str) -> types.Position:
    text = OLD_SOURCE.splitlines()[line - 1]
    return types.Position(line - 1, text.index(needle) + len(needle) // 2)


@pytest.mark.parametrize("locale", [None, "zh-CN"])
async def test_old_tutorial_names_say_what_they_mean_today(locale):
    expected_locale = "zh" if locale else "en"
    async with session("vscode", locale=locale) as client:
        open_document(client, OLD_URI, OLD_SOURCE)
        await diagnostics(client, OLD_URI, until=lambda items: True)
        for line, needle, key in OLD_CASES:
            value = await hover_at(client, old_position(line, needle), OLD_URI)
            assert value == api_doc(key, expected_locale), (line, needle)
        assert "0.4" in api_doc("volatile", expected_locale)
        # Another library's Variable is not torch's.
        assert await hover_at(client, old_position(7, "Variable"), OLD_URI) is None
