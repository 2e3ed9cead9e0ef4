"""What never runs: the reports of other rules that follow, on the same path, a
statement that surely raises.

`optimizer = Adam([x * 2])` raises ValueError; whatever the same call goes on to
do after it (a double backward through `x * 2`'s graph in the loop below) never
happens, and reporting it would describe a program that does not exist, one
that the fix of the first error usually changes. Such later reports are
dropped; the first one, the error the user will see, stays. Later reports of the
same rule stay too: the same mistake made twice (two in-place writes into one
parameter) is two places to fix.

A raise is sure when its rule reports only errors torch raises at the reported
statement, and nothing between the run's start and that statement could skip it
or catch it: no loop (it may run zero times), no branch whose test is unknown,
no `try`, no choice between callees. Only what the same outermost call runs
afterwards is dropped (or, for a function run on its own, the rest of that run):
after a raise at module level the next statement is still checked, since a
notebook's next cell runs all the same.
"""
from __future__ import annotations

from autograd_lsp.analysis.trace import CallSite, Decided, Invariant

# Rules whose every report is an exception torch raises at the reported statement.
RAISE_WHERE_REPORTED = frozenset({
    "double-backward", "nonscalar-backward", "numpy-requires-grad", "nonleaf-to-optimizer",
    "requires-grad-nonleaf", "int-requires-grad", "inplace-leaf", "no-grad-fn", "zero-dim-index",
    "removed-backward-keyword",
})

# Blocks that do not make what they hold conditional: a call the walker followed,
# and an `if` whose test was known (at module level, or on every pass).
_UNCONDITIONAL = (CallSite, Decided, Invariant)


def without_cascades(reports: list, trace) -> list:
    """`reports` ((rule, report) pairs of one run) less those of other rules a sure raise before
    them on the same path keeps from running."""
    raises = [(rule, report.at) for rule, report in reports
              if rule.name in RAISE_WHERE_REPORTED and report.at is not None and _sure(report.at.ctx)]
    if not raises:
        return reports
    order = {id(event): index for index, event in enumerate(trace.events)}
    # Per outermost call (None for a function run on its own): the first sure raise.
    first: dict = {}
    for rule, event in raises:
        index = order.get(id(event))
        if index is None:
            continue
        key = _path(event.ctx)
        if key is not _NO_PATH and (key not in first or index < first[key][0]):
            first[key] = (index, rule)
    if not first:
        return reports
    kept = []
    for rule, report in reports:
        event = report.at
        if event is not None:
            stop = first.get(_path(event.ctx))
            index = order.get(id(event))
            if stop is not None and index is not None and index > stop[0] and rule is not stop[1]:
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


def _sure(ctx) -> bool:
    return all(isinstance(block, _UNCONDITIONAL) for block in ctx.blocks)
