"""The snapshot of the store's statements (``tests/snapshots/statements.sql``) is the
statements as the store composes them now: a change to a column's policy or to a
statement shows in review as a diff of that file, written by
``python scripts/snapshot_statements.py``."""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "snapshot_statements.py"


def snapshot_statements() -> ModuleType:
    if str(SCRIPT.parent) not in sys.path:  # as when it runs: its neighbours import by name
        sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("snapshot_statements", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_snapshot_is_the_statements_as_composed() -> None:
    script = snapshot_statements()
    path: Path = script.SNAPSHOT
    stored = path.read_text(encoding="utf-8") if path.exists() else ""
    composed = script.render()
    diff = "".join(
        difflib.unified_diff(
            stored.splitlines(keepends=True),
            composed.splitlines(keepends=True),
            fromfile=f"{path.name} (stored)",
            tofile=f"{path.name} (composed now)",
        )
    )
    assert not diff, (
        f"the store's statements changed; if that is meant, refresh the snapshot with "
        f"`python scripts/snapshot_statements.py` and commit it:\n{diff}"
    )


def test_the_snapshot_names_each_statement_once() -> None:
    labels = [label for label, _ in snapshot_statements().labelled()]
    assert len(labels) == len(set(labels))
    assert {"memories._WRITE", "blocks._WRITES[False, BlockLabel.CORE]"} <= set(labels)
