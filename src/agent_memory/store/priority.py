"""Background work gives way to everything else on the machine: the CPU priority of a
process, and of a database session that works for it alone.

On Linux a process (and every thread it starts afterwards) can take ``SCHED_IDLE``:
it runs only on a core nothing else wants. Elsewhere, or where that is refused, it
takes the lowest nice value (19). A session whose server process runs on this machine
and may be reprioritised by this user (the embedded database runs as this user, or as
an account root made for it) can be lowered the same way; a server elsewhere is left as
it is. Only a session that seldom holds a lock requests wait for is: one building an
approximate index, which builds its graph in its own memory and takes the WAL's locks
only to write it out, on an index no request reads yet. A session that writes rows
requests also write takes and releases locks they wait for at every statement (the
WAL's, a commit's), and lowered, it would hold them while the scheduler gives it no
core, stalling the requests it meant to spare; storing vectors costs the database some
1.6 ms of CPU a line (the model spends twenty times that), and runs at normal priority.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
from pathlib import Path
from typing import Any

import psycopg

from agent_memory.domain.indexing import CpuTimes

log = logging.getLogger(__name__)

IDLE = "SCHED_IDLE"
NICE = "nice 19"


def lower(pid: int = 0) -> str | None:
    """Give process ``pid`` (0: this one, with the threads it starts from now on) the
    lowest CPU priority this system grants it; which one, or ``None`` when it may not be
    lowered."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
            return IDLE
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 19)
    except OSError:
        return None
    return NICE


# What ``ps`` and ``top`` show of an index worker (Linux, at most 15 bytes).
WORKER_NAME = b"memory-indexer"


def name_this_process(name: bytes = WORKER_NAME) -> None:
    """Show this process as ``name`` in ``ps`` and ``top`` (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0)


PR_SET_NAME = 15


def _is_local(conn: psycopg.AsyncConnection[Any]) -> bool:
    host = conn.info.host
    return host.startswith("/") or host in {"localhost", "127.0.0.1", "::1"}


def _is_postgres(pid: int) -> bool:
    """Whether ``pid`` is a PostgreSQL server process of this machine (Linux only)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() in {"postgres", "postmaster"}
    except OSError:
        return False


async def yield_to_others(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """Lower the priority of the server process of ``conn``'s session, where it runs on
    this machine and this user may; which priority it got, or ``None``."""
    if not sys.platform.startswith("linux") or not _is_local(conn):
        return None
    cursor = await conn.execute("SELECT pg_backend_pid()")
    row = await cursor.fetchone()
    if row is None:
        return None
    pid = int(row[0] if not isinstance(row, dict) else row["pg_backend_pid"])
    if not _is_postgres(pid):
        return None
    return lower(pid)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_times() -> CpuTimes | None:
    """The CPU seconds the whole machine and this process have used (Linux, from
    ``/proc/stat``: every state but idle and waiting on I/O), or ``None`` elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 6:
        return None
    ticks = [int(x) for x in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]  # idle, iowait
    own = os.times()
    return CpuTimes(machine=busy / _TICKS, own=own.user + own.system)
