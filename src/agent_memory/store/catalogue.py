"""Every SQL statement the store's modules compose, found by walking them: what the
checked-in snapshot shows a reviewer (``scripts/snapshot_statements.py``) and what the
size test holds to psycopg's parse-once limit, from one walk."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import agent_memory.store as store

SQL = re.compile(r"\s*(?:WITH|SELECT|INSERT|UPDATE|DELETE)\b")


def statements() -> Iterator[tuple[str, str, object, str]]:
    """Every statement of the store's modules: its module, the name it is bound to, its
    key when that name holds a dict of statements (else None), and its text."""
    for found in pkgutil.iter_modules(store.__path__):
        if found.name.startswith("migrations") or found.name == "catalogue":
            continue
        module = importlib.import_module(f"agent_memory.store.{found.name}")
        for name, value in vars(module).items():
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, text in items:
                if isinstance(text, str) and SQL.match(text):
                    yield found.name, name, key, text
