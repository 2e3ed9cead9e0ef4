"""Start-up costs: importing lsprotocol, pygls and libcst creates a few hundred
thousand objects, and the cyclic garbage collector would scan them again and
again while they are being made (about 10% of the server's start-up).

`quiet_gc()` turns the collector off for the imports; `settle()` then moves
everything alive into the permanent generation (gc.freeze), so later
collections, during analyses, do not walk the imported modules either.
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


def settle() -> None:
    gc.freeze()


def quiet_parser_warnings() -> None:
    """Parsing or compiling the user's code makes CPython warn about that code
    (`x is 1`, an invalid escape) on standard error, naming our call as the
    place. Those are not ours to print: the command line's and the server's
    outputs stay their own."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", message="invalid escape sequence", category=DeprecationWarning)
