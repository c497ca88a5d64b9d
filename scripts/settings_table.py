"""Write the README's configuration table from the settings object, or check it.

Each row comes from a field of ``Settings``: its environment variable, its default,
its meaning (``SETTING_DOCS``) and the ``serve`` flag that sets it, if any. So a new
setting reaches the table by ``make generate``, and ``make check-generated`` (run in
CI) fails while the table is stale.

    python scripts/settings_table.py          # rewrite the table in README.md
    python scripts/settings_table.py --check  # exit 1 when README.md is stale
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from agent_memory.cli import _parser
from agent_memory.config import SETTING_DOCS, Settings

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN = "<!-- settings table: written by scripts/settings_table.py -->"
END = "<!-- end of settings table -->"

# Read by libraries the service uses, not by the settings object.
OTHERS = (
    ("`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`", "unset", "read by the anthropic SDK as always"),
    ("`OTEL_*`", "unset", "tracing, and metrics pushed over OTLP; see below"),
)


def serve_flags() -> dict[str, str]:
    """The settings field each ``serve`` flag sets: named after it, or after it less
    its ``_seconds`` unit."""
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    names = {f.name for f in fields(Settings)}
    flags: dict[str, str] = {}
    for action in commands.choices["serve"]._actions:
        for name in (action.dest, f"{action.dest}_seconds"):
            if action.option_strings and name in names:
                flags[name] = action.option_strings[-1]
    return flags


def shown(value: Any) -> str:
    if value is None:
        return "unset"
    if value is False:
        return "off"
    if value == "":
        return "empty"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def table() -> str:
    flags = serve_flags()
    defaults = Settings()
    rows = ["| flag | environment | default | meaning |", "|---|---|---|---|"]
    for f in fields(Settings):
        meaning, default = SETTING_DOCS[f.name]
        flag = f"`{flags[f.name]}`" if f.name in flags else ""
        env = f"`MEMORY_{f.name.upper()}`"
        rows.append(
            f"| {flag} | {env} | {default or shown(getattr(defaults, f.name))} | {meaning} |"
        )
    rows += [f"| | {env} | {default} | {meaning} |" for env, default, meaning in OTHERS]
    return "\n".join(rows)


def with_table(readme: str) -> str:
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return f"{readme[:start]}\n{table()}\n{readme[end:]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check README.md")
    args = parser.parse_args()
    current = README.read_text(encoding="utf-8")
    wanted = with_table(current)
    if args.check:
        if wanted != current:
            print(
                "README.md: the settings table is stale; run make generate",
                file=sys.stderr,
            )
            return 1
        return 0
    if wanted != current:
        README.write_text(wanted, encoding="utf-8")
        print("README.md: settings table written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
