"""Write every SQL statement the store composes to ``tests/snapshots/statements.sql``, or
check that file.

The store's statements are composed from the models' column policies
(``store/columns.py``), so a change to a column, a policy or a helper can change many
statements at once. The snapshot puts what it changed in front of a reviewer as a diff:
each statement under a header naming it (``module.NAME`` or ``module.NAME[key]``),
as composed; a line compacted past 100 characters is split before its clauses and
then at its outermost commas, so a changed column shows as a changed line.

    python scripts/snapshot_statements.py          # rewrite the snapshot
    python scripts/snapshot_statements.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import enum
import re
import sys

from generated_file import ROOT, GeneratedFile

from agent_memory.store.catalogue import statements

SNAPSHOT = ROOT / "tests" / "snapshots" / "statements.sql"
WIDTH = 100
# Split before these, outside quotes, on a line too long to read.
_CLAUSE = re.compile(
    r"(?<=[\s()])(?=(?:SELECT|FROM|WHERE|SET|RETURNING|INSERT INTO|VALUES|ON CONFLICT"
    r"|DELETE FROM|(?:LEFT |CROSS )?JOIN(?: LATERAL)?|UNION(?: ALL)?|ORDER BY|GROUP BY"
    r"|LIMIT)\b)"
)


def shown_key(key: object) -> str:
    """A dict's key as the snapshot names it: enums by class and member."""
    if isinstance(key, tuple):
        return ", ".join(shown_key(k) for k in key)
    if isinstance(key, enum.Enum):
        return f"{type(key).__name__}.{key.name}"
    return repr(key)


def _outside_quotes(line: str) -> list[bool]:
    """For each character, whether it is outside a quoted literal or name."""
    outside, quote = [], ""
    for char in line:
        if quote:
            outside.append(False)
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            outside.append(False)
        else:
            outside.append(True)
    return outside


def _at_clauses(line: str) -> list[str]:
    outside = _outside_quotes(line)
    cuts = [m.start() for m in _CLAUSE.finditer(line) if m.start() > 0 and outside[m.start()]]
    return [line[a:b].rstrip() for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]


def _at_commas(line: str) -> list[str]:
    """The line split after each of its commas at the shallowest depth of parentheses."""
    outside = _outside_quotes(line)
    depth, commas = 0, []
    for i, char in enumerate(line):
        if not outside[i]:
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == ",":
            commas.append((depth, i + 1))
    if not commas:
        return [line]
    shallowest = min(d for d, _ in commas)
    cuts = [i for d, i in commas if d == shallowest]
    parts = [line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]
    return [p.strip() for p in parts if p.strip()]


def readable(text: str) -> str:
    """The statement, with each line past ``WIDTH`` split: before its clauses, then any
    part still too long at its outermost commas (continuations indented by two)."""
    lines = []
    for line in text.strip("\n").splitlines():
        if len(line) <= WIDTH:
            lines.append(line.rstrip())
            continue
        indent = line[: len(line) - len(line.lstrip())]
        first = True
        for clause in _at_clauses(line.strip()):
            parts = _at_commas(clause) if len(clause) > WIDTH else [clause]
            for part in parts:
                lines.append(indent + ("" if first else "  ") + part)
                first = False
    return "\n".join(lines)


def labelled() -> list[tuple[str, str]]:
    """Every statement under its label (``module.NAME``, ``module.NAME[key]``), by label."""
    return sorted(
        (f"{m}.{n}" if k is None else f"{m}.{n}[{shown_key(k)}]", t) for m, n, k, t in statements()
    )


def render() -> str:
    """The text the snapshot must have."""
    blocks = [f"-- {label}\n{readable(text)}\n" for label, text in labelled()]
    head = (
        "-- Every SQL statement of agent_memory.store, as composed. Written by\n"
        "-- scripts/snapshot_statements.py; do not edit by hand.\n"
    )
    return head + "".join(f"\n{block}" for block in blocks)


FILE = GeneratedFile(SNAPSHOT, "scripts/snapshot_statements.py", render)
check, write = FILE.check, FILE.write


if __name__ == "__main__":
    sys.exit(FILE.main(sys.argv[1:], __doc__))
