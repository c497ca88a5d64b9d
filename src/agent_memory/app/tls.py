"""TLS for the serving port: the operator's certificate, key and optional client CA."""

from __future__ import annotations

import grpc

from agent_memory.config import Settings


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """Credentials for a TLS port, or ``None`` when no certificate is configured.

    The files were checked when the settings were validated; with a client CA,
    callers must present a certificate it signed.
    """
    if settings.tls_cert is None or settings.tls_key is None:
        return None
    client_ca = settings.tls_client_ca.read_bytes() if settings.tls_client_ca else None
    return grpc.ssl_server_credentials(
        [(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )
