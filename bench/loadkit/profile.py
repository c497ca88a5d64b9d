"""py-spy on a service process during a measured window, summarised as two top lists."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = 25


class ProfileError(Exception):
    """py-spy could not record the process; the run goes on without a profile."""


class Profiler:
    """``py-spy record`` of one process, started now, stopped after ``seconds``."""

    def __init__(self, pid: int, seconds: float) -> None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        self._out = Path(tempfile.mkdtemp(prefix="rpc-load-profile-")) / "stacks.txt"
        self._seconds = max(1, round(seconds))
        try:
            self._proc = subprocess.Popen(
                [
                    *(spy, "record", "-p", str(pid), "-d", str(self._seconds)),
                    *("-r", "200", "--format", "raw", "-o", str(self._out)),
                    # Only the thread holding the GIL: Python's CPU, not threads asleep
                    # in waits that py-spy cannot always tell from work.
                    "--gil",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            shutil.rmtree(self._out.parent, ignore_errors=True)
            raise ProfileError(f"py-spy could not start ({exc})") from exc

    def finish(self) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """(own %, total %) by function, the busiest first.

        Raises:
            ProfileError: py-spy failed or recorded nothing.
        """
        try:
            try:
                _, err = self._proc.communicate(timeout=self._seconds + 60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.communicate()
                raise ProfileError("py-spy did not finish") from None
            if not self._out.exists():
                said = [line.strip() for line in err.splitlines() if line.strip()]
                reason = said[0] if said else f"exit status {self._proc.returncode}"
                raise ProfileError(f"py-spy recorded nothing: {reason}")
            return _summary(self._out.read_text())
        finally:
            shutil.rmtree(self._out.parent, ignore_errors=True)


def _summary(raw: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [_name(f) for f in stack.split(";") if "(" in f]
        if not frames:
            continue
        n = int(count)
        samples += n
        own[frames[-1]] += n
        for name in set(frames):
            total[name] += n
    if not samples:
        raise ProfileError("py-spy recorded no samples")

    def top(counter: collections.Counter[str]) -> list[tuple[str, float]]:
        return [(name, 100 * n / samples) for name, n in counter.most_common(TOP)]

    return top(own), top(total)


def _name(frame: str) -> str:
    """``function (path:line)`` to ``function (module path)``, site-packages trimmed."""
    function, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    short = path.split("site-packages/")[-1].split("/src/")[-1]
    return f"{function} ({short})"
