"""How the panel's browser tests and its screenshot script start Chromium: Debian's
package, with no sandbox, GPU or background traffic, so a run behaves the same in a
container and on a desk."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
