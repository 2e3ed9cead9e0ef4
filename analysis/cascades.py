"""What never runs: the reports of other rules that follow, on the same path, a
statement that surely raises.

`optimizer = Adam([x * 2])` raises ValueError; whatever the same call goes on to
do after it (a double backward through `x * 2`'s graph in the loop below) never
happens, and reporting it would describe a program that does not exist, one
that the fix of the first error usually changes. Such later reports are
dropped; the first one, the error the user will see, stays. Later reports of the
same rule stay too: the same mistake made twice (two in-place writes into one
parameter) is two places to fix.

A later report is dropped when it runs only after the raise ran: nothing
between them could skip the raise or catch it (the raise is inside every loop
pass, branch whose test is unknown, `try` and choice between callees that the
report is inside, on the same pass), and the same outermost call runs both (or,
for a function run on its own, the same run). A raise in a loop stops what that
pass does after it, not the code after the loop, which runs when the loop runs
zero times. After a raise at module level the next statement is still checked,
since a notebook's next cell runs all the same.
"""
from __future__ import annotations

from autograd_lsp.analysis.trace import CallSite, Decided, Invariant

# Rules whose every report is an exception torch raises at the reported statement.
RAISE_WHERE_REPORTED = frozenset({
    "double-backward", "nonscalar-backward", "numpy-requires-grad", "nonleaf-to-optimizer",
    "requires-grad-nonleaf", "int-requires-grad", "inplace-leaf", "no-grad-fn", "zero-dim-index",
    "removed-backward-keyword",
})

# Of those, the old spellings whose fix is a rename (`retain_graph=`, `.item()`): the
# program after them runs as it would have, so what follows is reported all the same
# (a script copied from an old tutorial gets every old idiom listed at once).
_RENAMES = frozenset({"removed-backward-keyword", "zero-dim-index"})

# Blocks that do not make what they hold conditional: a call the walker followed,
# and an `if` whose test was known (at module level, or on every pass).
_UNCONDITIONAL = (CallSite, Decided, Invariant)


def without_cascades(reports: list, trace) -> list:
    """`reports` ((rule, report) pairs of one run) less those of other rules that a raise
    before them on the same path keeps from running."""
    raises = [(rule, report.at) for rule, report in reports
              if rule.name in RAISE_WHERE_REPORTED and rule.name not in _RENAMES
              and report.at is not None and not isinstance(report.at, CallSite)
              and _path(report.at.ctx) is not _NO_PATH]
    if not raises:
        return reports
    order = {id(event): index for index, event in enumerate(trace.events)}
    kept = []
    for rule, report in reports:
        event = report.at
        # (A report said again at a helper's call stands or falls with the one inside.)
        if event is not None and not isinstance(event, CallSite) and any(raised is not rule and _runs_after(at, event, order)
                                     for raised, at in raises):
            continue
        kept.append((rule, report))
    return kept


_NO_PATH = object()


def _path(ctx):
    """What a raise at `ctx` stops: the outermost call it is inside, or the whole
    run of a function on its own; nothing at module level."""
    if ctx.alone:
        return None
    if ctx.calls:
        return ctx.calls[0]
    return _NO_PATH


def _runs_after(raised, event, order: dict) -> bool:
    """Whether `event` runs only after the statement of `raised` ran (and raised):
    later in the same outermost call, inside every loop pass and branch that the
    raise itself is inside (a raise in the first statement of a helper that a loop
    calls stops what the same pass does after it, not what follows the loop,
    which runs when the loop runs zero times)."""
    first, later = order.get(id(raised)), order.get(id(event))
    if first is None or later is None or later <= first:
        return False
    a, b = raised.ctx, event.ctx
    if _path(a) != _path(b):
        return False
    conditional = [k for k, block in enumerate(a.blocks) if not isinstance(block, _UNCONDITIONAL)]
    prefix = a.blocks[:conditional[-1] + 1] if conditional else ()
    if b.blocks[:len(prefix)] != prefix:
        return False
    return all(a.loop_pass_of(loop) == b.loop_pass_of(loop) for loop in a.loops if loop in prefix)
