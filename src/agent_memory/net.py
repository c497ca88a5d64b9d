"""Listening addresses as an operator gives them (``HOST:PORT``): resolved, checked
before anything is started, and the one line that says a flag's address cannot be
bound."""

from __future__ import annotations

import socket
from typing import Any

from agent_memory.config import SettingsError


def bind_address(listen: str) -> tuple[socket.AddressFamily, socket.SocketKind, int, Any]:
    """Family, type, protocol and socket address to bind ``listen`` (HOST:PORT).

    Raises:
        OSError: the host does not resolve.
    """
    host, _, port = listen.rpartition(":")
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]") or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    return family, kind, proto, address


def refuse_busy_port(listen: str, *, flag: str = "--listen") -> None:
    """Find a busy or unbindable ``--listen`` (or ``flag``) before the database is started
    for nothing.

    Raises:
        SettingsError: something listens there already, or it is no address of ours.
    """
    if listen.rpartition(":")[2] == "0":
        return
    try:
        family, kind, proto, address = bind_address(listen)
        # Without SO_REUSEPORT, so that a listener that has it is found too.
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except (OSError, ValueError) as exc:
        raise unbindable(listen, exc, flag=flag) from exc


def unbindable(listen: str, cause: object, *, flag: str = "--listen") -> SettingsError:
    """The one line for a ``--listen`` (or ``flag``) address that cannot be bound."""
    env = "MEMORY_" + flag.removeprefix("--").replace("-", "_").upper()
    return SettingsError(
        f"{flag} {listen}: cannot bind it ({cause}); pick another with {flag} or {env}"
    )
