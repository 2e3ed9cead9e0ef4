"""The locales of the message catalogue, and a client's locale tag mapped to one.

Imports nothing: the command line builds its `--locale` choices before it
loads the analyser.
"""
from __future__ import annotations

LOCALES = ("en", "zh")


def normalize_locale(tag) -> str | None:
    """"zh", "zh-CN", "zh_Hans", "ZH-hans-CN" -> "zh"; "en-US" -> "en"; others -> None.

    Every Chinese tag maps to the Simplified catalogue, the only Chinese one there is.
    """
    if not tag or not isinstance(tag, str):
        return None
    primary = tag.strip().replace("_", "-").split("-")[0].lower()
    return primary if primary in LOCALES else None
