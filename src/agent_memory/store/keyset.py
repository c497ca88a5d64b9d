"""Keyset pagination: the rows after a position in a multi-column order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, or_


def after(order: Sequence[tuple[Any, bool]], position: Sequence[Any]) -> Any:
    """Rows strictly after ``position`` in ``order``, pairs of (column, descending)."""
    clauses = []
    for i, (column, descending) in enumerate(order):
        equal = [c == v for (c, _), v in zip(order[:i], position[:i], strict=True)]
        # .op() because SQLAlchemy refuses < and > on booleans; PostgreSQL orders them.
        beyond = column.op("<" if descending else ">")(position[i])
        clauses.append(and_(*equal, beyond))
    return or_(*clauses)
