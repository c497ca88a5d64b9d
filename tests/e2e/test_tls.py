"""TLS on the serving port, with certificates the test makes: server only, and with
client certificates required."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agent_memory.config import Settings
from agent_memory_client import TLS, MemoryClient, NotFound, Unavailable
from agentmemory.v1 import memory_pb2, memory_service_pb2_grpc
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import ServeProcess, ServerThread, cli

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Issued:
    cert: bytes
    key: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def issue(
    common_name: str,
    *,
    signer: Issued | None = None,
    ca: bool = False,
    server: bool = False,
    names: tuple[str, ...] = ("localhost",),
) -> Issued:
    """A certificate for ``common_name``, signed by ``signer`` (self-signed without one)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    issuer_key = key
    issuer_name = _name(common_name)
    if signer is not None:
        issuer_key = serialization.load_pem_private_key(signer.key, None)  # type: ignore[assignment]
        issuer_name = x509.load_pem_x509_certificate(signer.cert).subject
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    *(x509.DNSName(name) for name in names),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
                if "localhost" in names
                else [x509.DNSName(name) for name in names]
            ),
            critical=False,
        )
    cert = builder.sign(issuer_key, hashes.SHA256())
    return Issued(
        cert=cert.public_bytes(serialization.Encoding.PEM),
        key=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


@dataclass(frozen=True)
class Pki:
    ca: Issued
    server: Issued
    client: Issued
    stranger: Issued  # a client certificate from another CA
    folder: Path

    def write(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    ca = issue("agent-memory test CA", ca=True)
    made = Pki(
        ca=ca,
        server=issue("localhost", signer=ca, server=True),
        client=issue("orchestrator", signer=ca),
        stranger=issue("stranger"),
        folder=tmp_path_factory.mktemp("pki"),
    )
    for name, issued in (("ca", ca), ("server", made.server), ("client", made.client)):
        made.write(f"{name}.pem", issued.cert)
        made.write(f"{name}-key.pem", issued.key)
    return made


def tls_settings(pki: Pki, *, client_ca: bool = False) -> Settings:
    return Settings(
        insecure_local=True,
        tls_cert=pki.folder / "server.pem",
        tls_key=pki.folder / "server-key.pem",
        tls_client_ca=pki.folder / "ca.pem" if client_ca else None,
    )


def upsert(channel: grpc.Channel) -> pb.UpsertMemoryResponse:
    stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
    reply: pb.UpsertMemoryResponse = stub.UpsertMemory(
        pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id="tls"), key="over-tls", value="encrypted"
        ),
        timeout=10,
    )
    return reply


def test_a_tls_port_serves_clients_that_trust_its_certificate(database_url: str, pki: Pki) -> None:
    with ServerThread(database_url, settings=tls_settings(pki)) as served:
        trusted = grpc.ssl_channel_credentials(root_certificates=pki.ca.cert)
        with grpc.secure_channel(served.address, trusted) as channel:
            assert upsert(channel).memory.value == "encrypted"
        # A plaintext client gets no answer from a TLS port.
        with grpc.insecure_channel(served.address) as channel, pytest.raises(grpc.RpcError) as info:
            upsert(channel)
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
        # Nor does a client that does not trust the server's CA.
        untrusting = grpc.ssl_channel_credentials(root_certificates=pki.stranger.cert)
        with (
            grpc.secure_channel(served.address, untrusting) as channel,
            pytest.raises(grpc.RpcError) as info,
        ):
            upsert(channel)
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]


def test_with_a_client_ca_only_clients_holding_a_certificate_it_signed_are_served(
    database_url: str, pki: Pki
) -> None:
    with ServerThread(database_url, settings=tls_settings(pki, client_ca=True)) as served:
        with_cert = grpc.ssl_channel_credentials(
            root_certificates=pki.ca.cert,
            private_key=pki.client.key,
            certificate_chain=pki.client.cert,
        )
        with grpc.secure_channel(served.address, with_cert) as channel:
            assert upsert(channel).memory.key == "over-tls"
        without_cert = grpc.ssl_channel_credentials(root_certificates=pki.ca.cert)
        with (
            grpc.secure_channel(served.address, without_cert) as channel,
            pytest.raises(grpc.RpcError) as info,
        ):
            upsert(channel)
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
        foreign_cert = grpc.ssl_channel_credentials(
            root_certificates=pki.ca.cert,
            private_key=pki.stranger.key,
            certificate_chain=pki.stranger.cert,
        )
        with (
            grpc.secure_channel(served.address, foreign_cert) as channel,
            pytest.raises(grpc.RpcError) as info,
        ):
            upsert(channel)
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]


def test_the_command_serves_tls_and_its_health_check_speaks_it(database_url: str, pki: Pki) -> None:
    served = ServeProcess(
        "--database-url",
        database_url,
        "--insecure-local",
        "--http-listen",
        "127.0.0.1:0",
        "--tls-cert",
        str(pki.folder / "server.pem"),
        "--tls-key",
        str(pki.folder / "server-key.pem"),
    )
    try:
        assert "TLS" in served.log()
        trusted = grpc.ssl_channel_credentials(root_certificates=pki.ca.cert)
        port = served.address.rpartition(":")[2]
        with grpc.secure_channel(f"localhost:{port}", trusted) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        checked = cli(
            "health", "--address", f"localhost:{port}", "--tls-ca", str(pki.folder / "ca.pem")
        )
        assert checked.returncode == 0, checked.stderr
        assert "SERVING" in checked.stdout
        # The HTTP side serves TLS with the same certificate, and only TLS.
        line = next(x for x in served.log().splitlines() if "agent-memory http on" in x)
        http_port = line.rsplit(":", 1)[1].split()[0]
        ca = ssl.create_default_context(cafile=str(pki.folder / "ca.pem"))
        answered = httpx.get(f"https://localhost:{http_port}/healthz", verify=ca)
        assert answered.status_code == 200
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://localhost:{http_port}/healthz", timeout=5)
    finally:
        assert served.terminate() == 0, served.log()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--tls-cert", "{server}"), "--tls-key"),
        (("--tls-cert", "{server}", "--tls-key", "{missing}"), "--tls-key"),
        (("--tls-cert", "{server}", "--tls-key", "{client_key}"), "--tls-cert"),
        (
            ("--tls-cert", "{server}", "--tls-key", "{server_key}", "--tls-client-ca", "{junk}"),
            "--tls-client-ca",
        ),
        (("--tls-client-ca", "{ca}"), "--tls-client-ca"),
    ],
)
def test_a_tls_mistake_is_one_line_naming_the_flag(
    pki: Pki, flags: tuple[str, ...], named: str
) -> None:
    paths = {
        "server": pki.folder / "server.pem",
        "server_key": pki.folder / "server-key.pem",
        "client_key": pki.folder / "client-key.pem",  # a key of another certificate
        "ca": pki.folder / "ca.pem",
        "missing": pki.folder / "nothing-here.pem",
        "junk": pki.write("junk.pem", b"not a certificate\n"),
    }
    args = [flag.format(**{k: str(v) for k, v in paths.items()}) for flag in flags]
    done = cli(
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        "postgresql://postgres@127.0.0.1:1/unused",
        *args,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert named in done.stderr


def test_the_health_check_asks_by_the_name_the_certificate_carries(
    database_url: str, pki: Pki
) -> None:
    named = issue("memory.example", signer=pki.ca, server=True, names=("memory.example",))
    served = ServeProcess(
        "--database-url",
        database_url,
        "--insecure-local",
        "--tls-cert",
        str(pki.write("named.pem", named.cert)),
        "--tls-key",
        str(pki.write("named-key.pem", named.key)),
    )
    try:
        ca = str(pki.folder / "ca.pem")
        # Asked on loopback, as a container asks itself: the name does not match ...
        mismatched = cli("health", "--address", served.address, "--tls-ca", ca)
        assert mismatched.returncode == 1, mismatched.stderr
        # ... unless told the name the certificate carries.
        checked = cli(
            "health",
            "--address",
            served.address,
            "--tls-ca",
            ca,
            "--tls-server-name",
            "memory.example",
        )
        assert checked.returncode == 0, checked.stderr
        assert "SERVING" in checked.stdout
    finally:
        assert served.terminate() == 0, served.log()


def test_the_python_client_speaks_tls_with_a_client_certificate(
    database_url: str, pki: Pki
) -> None:
    """The client's TLS settings (files, mutual TLS) and the local mode's identity
    headers, against the real server."""
    tls = TLS(
        root_certificates=pki.folder / "ca.pem",
        certificate_chain=pki.folder / "client.pem",
        private_key=pki.folder / "client-key.pem",
    )
    with ServerThread(database_url, settings=tls_settings(pki, client_ca=True)) as served:
        with MemoryClient(served.address, tls=tls, tenant_id="acme", user_id="ana") as ana:
            saved = ana.upsert_memory("over", "tls", agent_id="tls")
            assert ana.get_memory(saved.id).value == "tls"
        with (
            MemoryClient(served.address, tls=tls, tenant_id="other", user_id="bo") as other,
            pytest.raises(NotFound),
        ):
            other.get_memory(saved.id)
        without_cert = TLS(root_certificates=pki.ca.cert)
        with (
            MemoryClient(served.address, tls=without_cert, attempts=1) as refused,
            pytest.raises(Unavailable),
        ):
            refused.get_memory(saved.id)
