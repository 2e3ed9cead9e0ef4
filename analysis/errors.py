"""Naming an exception in one short line, safely."""
from __future__ import annotations


def describe_error(exc: BaseException, limit: int = 300) -> str:
    """One short line naming an exception. Its text may be huge (the repr of a
    node holding a long chain) or may itself fail to build; neither must spread
    into logs, messages or the time it takes to write them."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - str() of an exception can raise anything
        text = "(no description)"
    text = " ".join(text[:limit].split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
