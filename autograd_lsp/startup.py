"""Start-up costs: importing lsprotocol, pygls and libcst creates a few hundred
thousand objects, and the cyclic garbage collector would scan them again and
again while they are being made (about 10% of the server's start-up).

`quiet_gc()` turns the collector off for the imports; `settle()` then moves
everything alive into the permanent generation (gc.freeze), so later
collections, during analyses, do not walk the imported modules either, and
makes young-generation passes rarer: an analysis allocates containers by the
million, nearly all freed by reference counting, and at CPython's default (a
pass every 700 net allocations) the collector took about a third of the
command line's CPU over pytorch-image-models (7.0 of 22.5 s). A pass every
50,000 took a quarter of that, with the same peak memory there (259 MB).
"""
from __future__ import annotations

import contextlib
import gc
import warnings


@contextlib.contextmanager
def quiet_gc():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Net allocations between two passes over the young generation.
YOUNG_GENERATION_THRESHOLD = 50_000


def settle() -> None:
    gc.freeze()
    older = gc.get_threshold()[1:]
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *older)


def quiet_parser_warnings() -> None:
    """Parsing or compiling the user's code makes CPython warn about that code
    (`x is 1`, an invalid escape) on standard error, naming our call as the
    place. Those are not ours to print: the command line's and the server's
    outputs stay their own."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", message="invalid escape sequence", category=DeprecationWarning)
