"""A file written from a declaration: what every generator here shares. It formats the
text it renders with ruff as the file would be, checks the file on disk against it
(``--check``, for CI) or writes it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class GeneratedFile:
    """``path``, written by ``script`` (a path under the repository) from ``render``."""

    path: Path
    script: str
    render: Callable[[], str]

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    def fail(self, message: str) -> NoReturn:
        raise SystemExit(f"{self.script}: {message}")

    def ruff(self, arguments: list[str], text: str) -> str:
        """``text`` through ``ruff <arguments>``, read as this file would be."""
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *arguments, "--stdin-filename", str(self.path), "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        if done.returncode != 0:
            self.fail(f"ruff {arguments[0]} failed:\n{done.stderr}")
        return done.stdout

    def check(self) -> int:
        """Exit status 0 when the file on disk is what ``render`` gives, else 1."""
        current = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        if self.render() == current:
            print(f"{self.name} is up to date")
            return 0
        print(f"{self.name} is stale; run `python {self.script}`.", file=sys.stderr)
        return 1

    def write(self) -> int:
        self.path.write_text(self.render(), encoding="utf-8", newline="\n")
        print(self.name)
        return 0

    def main(self, argv: list[str] | None, description: str | None) -> int:
        parser = argparse.ArgumentParser(description=(description or "").splitlines()[0] or None)
        parser.add_argument(
            "--check",
            action="store_true",
            help=f"exit 1 when {self.path.name} is stale, writing nothing",
        )
        args = parser.parse_args(argv)
        return self.check() if args.check else self.write()
