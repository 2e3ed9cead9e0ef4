"""The shape of a rule: its identity, its texts, its proof and its check.

A rule is one module under `analysis/rules/` holding one `Rule` subclass. It
carries its own examples: `bad` ones that must be flagged on the given line and
`good` ones that must stay quiet. Tests are generated from them, and every
example is also run with real torch to prove what its `runtime` says.
"""
from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Iterator, Union

from autograd_lsp.analysis.records import record

if TYPE_CHECKING:
    from autograd_lsp.analysis.trace import Trace


# -- what running an example with torch must show ------------------------------------

@record
class Raises:
    """The example raises `exception` with `match` in its message; the rule's
    message on that example quotes `match` too."""
    exception: str
    match: str


@record
class Warns:
    """The example runs and warns with `category`; `match` is in the warning text."""
    category: str
    match: str


@record
class Silent:
    """The example runs without error, and `check`, evaluated in its final globals,
    is true: the wrong result really happened."""
    check: str
    what: str = ""


@record
class Clean:
    """The example runs without exception and without UserWarning."""


Runtime = Union[Raises, Warns, Silent, Clean]


@record
class Example:
    code: str
    runtime: Runtime = Clean()
    # For bad examples: the 1-based line the finding must start on.
    line: int | None = None
    # Where the example comes from ("seed:000" for the articles the project grew from).
    source: str = ""
    # For bad examples, when given: the 1-based column the finding starts at, and the
    # text after applying the rule's first fix (the generated tests check them).
    column: int | None = None
    fixed: str | None = None


# -- what a rule hands back to the engine -------------------------------------------

@record
class Edit:
    """A text edit described by nodes; the engine turns it into positions.

    kind: "replace" (node's text -> text), "insert_after" (text after node),
    "insert_before" (text before node), "line_before" (a new line with the
    node's indentation before the statement `node`), "line_after" (likewise after
    it), "delete_line" (remove the statement `node`'s lines), "wrap" (the statement
    `node` moved into a block opened by `text`, e.g. "with torch.no_grad():"),
    "delete_arg" (remove the call argument `node` and its comma), "wrap_run" (the
    statements `node` through `through`, siblings in one block, moved into a block
    opened by `text`; made of insertions at line starts only, so another edit of
    the same fix may change code on those lines).
    """
    kind: str
    node: object                     # an ast node
    text: str = ""
    # The event the node was seen in (its context says which chunk holds it).
    at: object = None
    # For "wrap_run": the last statement of the run.
    through: object = None


@record
class FixSpec:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@record
class Report:
    node: object                     # an ast node
    message: str
    fixes: tuple[FixSpec, ...] = field(default=())
    # The event the node was seen in (its context says which chunk holds it, and
    # through which calls of this file it was reached).
    at: object = None


class Rule:
    code: str = ""
    name: str = ""
    severity: str = "error"   # error: raises; warning: silently wrong; info: memory/speed
    # Texts per locale ("en", "zh"); `message` entries are str.format templates.
    summary: dict[str, str] = {}
    explanation: dict[str, str] = {}
    messages: dict[str, dict[str, str]] = {}
    bad: tuple[Example, ...] = ()
    good: tuple[Example, ...] = ()

    def check(self, trace: "Trace", locale: str) -> Iterator[Report]:
        raise NotImplementedError

    def text(self, key: str, locale: str, **args) -> str:
        """The message `key` in `locale` (English when that locale lacks it)."""
        table = self.messages.get(locale) or self.messages["en"]
        template = table.get(key) or self.messages["en"][key]
        return template.format(**args)

    def describe(self, locale: str = "en") -> tuple[str, str]:
        return (self.summary.get(locale) or self.summary["en"],
                self.explanation.get(locale) or self.explanation["en"])
