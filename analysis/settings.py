"""Which rules run and how loud they are: the part of configuration the core needs.

Reading `pyproject.toml` or LSP settings is the caller's job (the core does no
I/O); they build a `Settings` and pass it in.
"""
from __future__ import annotations

from autograd_lsp.analysis.findings import SEVERITIES
from autograd_lsp.analysis.records import record


@record
class Settings:
    # Rule names or codes; a code matches by prefix ("AG1" selects every AG1xx code).
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # rule name or code -> "error" | "warning" | "info"
    severities: tuple[tuple[str, str], ...] = ()
    locale: str = "en"

    @staticmethod
    def build(select=(), ignore=(), severities=None, locale="en") -> "Settings":
        sev = tuple(sorted((severities or {}).items()))
        for key, value in sev:
            if value not in SEVERITIES:
                raise ValueError(f"severity of {key!r} must be one of {', '.join(SEVERITIES)}, not {value!r}")
        return Settings(tuple(select), tuple(ignore), sev, locale)

    def enables(self, code: str, name: str) -> bool:
        if self.select and not any(_matches(key, code, name) for key in self.select):
            return False
        return not any(_matches(key, code, name) for key in self.ignore)

    def severity_for(self, code: str, name: str, default: str) -> str:
        for key, value in self.severities:
            if _matches(key, code, name):
                return value
        return default


def _matches(key: str, code: str, name: str) -> bool:
    key = key.strip()
    if key.upper().startswith("AG"):
        return code.startswith(key.upper())
    return key == name or key == "ALL"
