"""Inline suppression: `# noqa` (everything) or `# noqa: AG101, AG2` (codes, by
prefix) on a finding's first line."""
from __future__ import annotations

import re

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)


def noqa_codes(line: str) -> frozenset | None:
    """None when the line has no noqa; an empty set for a bare `# noqa`."""
    if "#" not in line:
        return None
    match = NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)


def is_suppressed(line: str, code: str) -> bool:
    codes = noqa_codes(line)
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)
