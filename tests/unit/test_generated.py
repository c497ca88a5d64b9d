"""The generated code must be fresh: the stubs match proto/, the client's records
(``types.py``) the same contract, and its methods (``_methods.py``) their declaration
in ``_ops.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_generated_stubs_are_fresh(project_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(project_root / "scripts" / "generate_protos.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
