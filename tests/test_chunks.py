"""The chunk splitter's invariants, on hand-picked cases and generated modules."""
from __future__ import annotations

import re

import libcst as cst
from hypothesis import HealthCheck, given, settings, strategies as st

from autograd_lsp.analysis.chunks import ChunkSplitter, cut_at_recovery_lines, split_chunks
from autograd_lsp.analysis.engine import Analyzer


def newlines(text: str) -> int:
    return len(re.findall(r"\r\n|\r|\n", text))


def texts(source: str) -> list[str]:
    return [c.text for c in split_chunks(source)]


def parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except (cst.ParserSyntaxError, SyntaxError, RecursionError, ValueError):
        # SyntaxError: libcst's validation errors (`b'' ''`)
        return False


def check_invariants(source: str) -> None:
    chunks = split_chunks(source)
    joined = "".join(c.text for c in chunks)
    # Only leading whitespace-only text may be dropped.
    assert source.endswith(joined)
    assert not source[:len(source) - len(joined)].strip()
    line = 1 + newlines(source[:len(source) - len(joined)])
    for chunk in chunks:
        assert chunk.start_line == line
        line += newlines(chunk.text)
    if parses(source):
        for chunk in chunks:
            assert parses(chunk.text), chunk.text


# -- hand-picked cases ---------------------------------------------------------------

def test_statements_split_and_join_back():
    source = "import torch\nx = 1\n\ndef f():\n    return x\n\nclass A:\n    pass\nprint(f())\n"
    assert texts(source) == ["import torch\n", "x = 1\n\n", "def f():\n    return x\n\n",
                             "class A:\n    pass\n", "print(f())\n"]
    check_invariants(source)


def test_leading_blank_lines_are_dropped_and_leading_comments_kept():
    assert texts("\n\n  \nx = 1\n") == ["x = 1\n"]
    assert split_chunks("\n\nx = 1\n")[0].start_line == 3
    assert texts("# header\n\nx = 1\n") == ["# header\n\n", "x = 1\n"]


def test_decorators_stay_with_their_definition():
    source = "@a\n# note\n@b(1,\n2)\ndef f():\n    pass\n@dataclass\nclass C:\n    x: int\n"
    assert texts(source) == ["@a\n# note\n@b(1,\n2)\ndef f():\n    pass\n",
                             "@dataclass\nclass C:\n    x: int\n"]


def test_continuation_clauses_stay_with_their_statement():
    source = ("if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n"
              "try:\n    pass\nexcept E:\n    pass\nelse:\n    pass\nfinally:\n    pass\n"
              "for i in x:\n    pass\nelse:\n    pass\n")
    assert len(split_chunks(source)) == 3
    check_invariants(source)


def test_names_that_begin_like_clause_keywords_start_statements():
    assert texts("x = 1\nelse1 = 2\nelsewhere = 3\nfinally_ = 4\n") == \
        ["x = 1\n", "else1 = 2\n", "elsewhere = 3\n", "finally_ = 4\n"]


def test_column_zero_lines_inside_strings_brackets_and_continuations_are_not_starts():
    source = ('s = """\nx = 1\ndef g(): pass\n"""\n'
              "t = '''\nclass A: pass\n'''\n"
              "u = [\n1,\n2,\n]\n"
              "v = f(a,\nb)\n"
              "w = 1 + \\\n2\n"
              "z = ('a'\n'b')\n")
    assert texts(source) == ['s = """\nx = 1\ndef g(): pass\n"""\n', "t = '''\nclass A: pass\n'''\n",
                             "u = [\n1,\n2,\n]\n", "v = f(a,\nb)\n", "w = 1 + \\\n2\n",
                             "z = ('a'\n'b')\n"]
    check_invariants(source)


def test_escaped_quotes_and_quotes_in_comments():
    source = "a = 'it\\'s'\n# don't\nb = \"\\\"\"\nc = '''x''''''y'''\nd = 1\n"
    assert len(split_chunks(source)) == 4
    check_invariants(source)


def test_single_quote_followed_by_triple_quote():
    # 'a' then '''b ... ''' : the string after the first one spans lines
    source = "x = 'a''''b\nc = 1\n'''\nd = 2\n"
    assert parses(source)
    assert texts(source) == ["x = 'a''''b\nc = 1\n'''\n", "d = 2\n"]


def test_comment_lines_at_column_zero_inside_a_body_do_not_split_it():
    source = "def f():\n    x = 1\n# a note\n    return x\n\n\n# about g\ndef g():\n    pass\n"
    assert texts(source) == ["def f():\n    x = 1\n# a note\n    return x\n\n\n# about g\n",
                             "def g():\n    pass\n"]
    check_invariants(source)


def test_other_line_endings():
    for newline in ("\r\n", "\r"):
        source = newline.join(["x = 1", "def f():", "    return (1 +", "2)", "y = 'a\\", "b'", ""])
        assert texts(source) == [t.replace("\n", newline) for t in
                                 ["x = 1\n", "def f():\n    return (1 +\n2)\n", "y = 'a\\\nb'\n"]]
        check_invariants(source)
        assert [c.start_line for c in split_chunks(source)] == [1, 2, 5]


def test_unusual_line_separators_inside_strings_do_not_shift_lines():
    source = 'a = "x\x0cy\u2028z\x85"\nb = 1\n'
    chunks = split_chunks(source)
    assert [c.start_line for c in chunks] == [1, 2]
    check_invariants(source)


def test_an_unclosed_bracket_stops_at_the_next_definition():
    source = "def f():\n    x = g(1,\n    return x\n\ndef h():\n    return 2\nclass K:\n    pass\n"
    assert texts(source)[1:] == ["def h():\n    return 2\n", "class K:\n    pass\n"]


def test_an_open_docstring_is_cut_at_the_next_definition_only_when_it_does_not_parse():
    broken = 'def f():\n    """\n    x = 1\n\ndef g():\n    """doc"""\n    return 1\n\ndef h():\n    pass\n'
    [chunk] = [c for c in split_chunks(broken) if c.text.startswith("def f")]
    assert chunk.recovery_lines
    pieces = cut_at_recovery_lines(chunk)
    assert [p.start_line for p in pieces][:2] == [1, 5]
    assert parses(pieces[1].text)
    # The engine reports the open docstring and still analyses what follows.
    findings = Analyzer().analyze(broken)
    assert [f.code for f in findings] == ["AG001"]
    # A valid docstring holding a column-0 `def` is one chunk and parses.
    valid = 'def f():\n    """Example:\n\ndef g(): pass\n    """\n    return 1\n'
    assert texts(valid) == [valid]
    assert Analyzer().analyze(valid) == []


def test_a_syntax_error_in_one_chunk_leaves_the_others_analysable():
    good = ("import torch\n"
            "x = torch.randn(3, requires_grad=True)\n"
            "def broken(:\n    pass\n"
            "y = x * 2\n"
            "y.backward()\n")
    findings = Analyzer().analyze(good)
    assert sorted(f.code for f in findings) == ["AG001", "AG101"]
    [syntax] = [f.line for f in findings if f.code == "AG001"]
    assert syntax in (3, 4)     # where libcst notices it, inside the broken def
    assert [f.line for f in findings if f.code == "AG101"] == [6]


# -- generated modules ---------------------------------------------------------------

NAMES = st.sampled_from(["x", "y", "loss", "else1", "model", "elsewhere"])

SIMPLE = st.one_of(
    NAMES.map(lambda n: f"{n} = 1\n"),
    NAMES.map(lambda n: f"{n} = f(1,\n2)\n"),
    NAMES.map(lambda n: f"{n} = [\n1,\n]\n"),
    NAMES.map(lambda n: f"{n} = 1 + \\\n2\n"),
    NAMES.map(lambda n: f"{n} = '''\n{n} = 2\ndef q(): pass\n'''\n"),
    NAMES.map(lambda n: f"{n} = \"it's # not a comment\"\n"),
    NAMES.map(lambda n: f"{n} = 'a\\\\'  # backslash at the end\n"),
    st.just("# a comment\n"),
    st.just("\n"),
    st.just("import torch\n"),
)

BODY_LINE = st.one_of(
    st.just("    x = 1\n"),
    st.just("# column-0 comment in a body\n"),
    st.just("    s = '''\nnot a start\n'''\n"),
    st.just("    call(a,\nb)\n"),
    st.just("\n"),
)


@st.composite
def compound(draw):
    body = "".join(draw(st.lists(BODY_LINE, min_size=0, max_size=3))) + "    pass\n"
    kind = draw(st.sampled_from(["def", "class", "if", "try", "for", "with", "decorated"]))
    if kind == "def":
        return "def f(a, b=(1,\n2)):\n" + body
    if kind == "class":
        return "class C(Base):\n" + body
    if kind == "if":
        return "if a:\n" + body + "elif b:\n" + body + "else:\n" + body
    if kind == "try":
        return "try:\n" + body + "except E:\n" + body + "finally:\n" + body
    if kind == "for":
        return "for i in x:\n" + body + "else:\n" + body
    if kind == "with":
        return "with torch.no_grad():\n" + body
    return "@decorator\n# between\n@other(1,\n2)\ndef g():\n" + body


MODULES = st.lists(st.one_of(SIMPLE, compound()), min_size=1, max_size=12).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MODULES)
def test_generated_modules_keep_the_invariants(source):
    assert parses(source)
    check_invariants(source)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab =()[]{}'\"\\#@:\n\r\t", max_size=80))
def test_any_text_joins_back(source):
    check_invariants(source)


@st.composite
def edit_sequences(draw):
    source = draw(MODULES)
    edits = draw(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1),
                                    st.sampled_from(["x", "(", ")", "\n", "'", '"""', "#", "\\",
                                                     " ", "@", "def ", "else:", "\r\n"])),
                          min_size=1, max_size=15))
    return source, edits


@settings(max_examples=200, deadline=None)
@given(edit_sequences())
def test_incremental_splitting_equals_splitting_afresh(case):
    source, edits = case
    splitter = ChunkSplitter()
    assert splitter.split(source) == split_chunks(source)
    for where, delete, text in edits:
        pos = int(where * len(source))
        if delete:
            source = source[:pos] + source[pos + len(text):]
        else:
            source = source[:pos] + text + source[pos:]
        assert splitter.split(source) == split_chunks(source)
