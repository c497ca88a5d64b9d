#!/usr/bin/env python3
"""Regenerate the Python gRPC stubs in ``clients/python/generated/`` from ``proto/``.

    python scripts/generate_protos.py          # rewrite clients/python/generated/
    python scripts/generate_protos.py --check  # exit 1 when it is stale
    python scripts/generate_protos.py --image build/proto.binpb  # for buf lint

Output goes under ``clients/python/generated/agentmemory/v1/`` (``*_pb2.py``,
``*_pb2.pyi``, ``*_pb2_grpc.py``), importable as ``agentmemory.v1.memory_pb2``,
plus ``descriptors.binpb``: the contract as a ``FileDescriptorSet`` with its
comments, which the HTTP side reads for OpenAPI descriptions (the Python stubs
carry no comments). The ``google.api`` protos
come from the googleapis-common-protos package, not from this repository.

The stubs ship in the client distribution (``agent-memory-grpc-client``), which the
service carries too: the contract has one home, and a client install needs nothing
of the server. The whole folder belongs to this script: it is rebuilt from
scratch so stubs of deleted protos do not linger.

Both modes also run ``scripts/generate_types.py``, which writes the Python client's
records from the contract (``agent_memory_client/types.py``), and
``scripts/generate_client.py``, which writes its methods from their declaration
(``agent_memory_client/_ops.py``), so one command regenerates, and one checks,
everything generated for the client.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

import generate_client
import generate_types
from grpc_tools import protoc  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
GENERATED_DIR = ROOT / "clients" / "python" / "generated"
PACKAGE_DIRS = (Path("agentmemory"), Path("agentmemory") / "v1")

README = """\
# clients/python/generated/

Python gRPC stubs for `proto/agentmemory/v1/*.proto`, made by grpcio-tools.

Everything in this folder is written by `scripts/generate_protos.py` and is
never edited by hand. After changing a `.proto` file, run:

    python scripts/generate_protos.py

CI runs `python scripts/generate_protos.py --check`, which fails when this
folder is stale. The digest below covers the proto sources whole, comments
included, so any edit to them asks for a regeneration.

Proto sources SHA-256: {digest}
"""


def proto_files() -> list[Path]:
    """Proto files relative to ``proto/``, sorted so output is deterministic."""
    return sorted(p.relative_to(PROTO_DIR) for p in PROTO_DIR.rglob("*.proto"))


def proto_digest(files: list[Path]) -> str:
    """SHA-256 over every proto file's path and bytes, in sorted order."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.as_posix().encode() + b"\0" + (PROTO_DIR / f).read_bytes() + b"\0")
    return digest.hexdigest()


DESCRIPTOR_SET = Path("agentmemory") / "v1" / "descriptors.binpb"


def well_known_include() -> str:
    """Return the include path of the well-known protos bundled with grpcio-tools."""
    return str(resources.files("grpc_tools") / "_proto")


def googleapis_include() -> str:
    """The include path of ``google/api/*.proto``, shipped by googleapis-common-protos."""
    from google.api import annotations_pb2

    return str(Path(annotations_pb2.__file__).resolve().parent.parent.parent)


def include_args() -> list[str]:
    """``--proto_path`` flags for our protos and everything they import."""
    return [
        f"--proto_path={PROTO_DIR}",
        f"--proto_path={googleapis_include()}",
        f"--proto_path={well_known_include()}",
    ]


def generate(out_dir: Path) -> None:
    """Generate every stub plus package markers and README into ``out_dir``."""
    files = proto_files()
    if not files:
        msg = f"no .proto files under {PROTO_DIR}"
        raise SystemExit(msg)
    args = [
        "grpc_tools.protoc",
        *include_args(),
        f"--descriptor_set_out={out_dir / DESCRIPTOR_SET}",
        "--include_source_info",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(f.as_posix() for f in files),
    ]
    for package in PACKAGE_DIRS:
        (out_dir / package).mkdir(parents=True, exist_ok=True)
    if protoc.main(args) != 0:
        msg = "protoc failed"
        raise SystemExit(msg)
    for package in PACKAGE_DIRS:
        (out_dir / package / "__init__.py").write_bytes(b"")
    # The .pyi stubs are the messages' types; the marker lets type checkers use them.
    (out_dir / PACKAGE_DIRS[0] / "py.typed").write_bytes(b"")
    readme = README.format(digest=proto_digest(files))
    (out_dir / "README.md").write_text(readme, encoding="utf-8", newline="\n")


def relative_files(root: Path) -> set[Path]:
    """Every file under ``root``, relative to it (caches excluded)."""
    if not root.is_dir():
        return set()
    return {
        p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }


def stale_files(fresh: Path, current: Path) -> list[Path]:
    """Files missing, extra or differing between ``fresh`` and ``current``."""
    wanted = relative_files(fresh)
    present = relative_files(current)
    differing = {
        p for p in wanted & present if not filecmp.cmp(fresh / p, current / p, shallow=False)
    }
    return sorted((wanted ^ present) | differing)


def check() -> int:
    """Exit status 0 when the stubs match a fresh build, else 1."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(fresh)
        stale = stale_files(fresh, GENERATED_DIR)
    if not stale:
        print("clients/python/generated/ is up to date")
        return 0
    print(
        "clients/python/generated/ is stale; run `python scripts/generate_protos.py`.",
        file=sys.stderr,
    )
    for path in stale:
        print(f"  {(GENERATED_DIR / path).relative_to(ROOT).as_posix()}", file=sys.stderr)
    return 1


def write() -> int:
    """Rebuild the stubs folder from scratch; a failed build leaves it untouched."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "generated"
        fresh.mkdir()
        generate(fresh)
        shutil.rmtree(GENERATED_DIR, ignore_errors=True)
        shutil.copytree(fresh, GENERATED_DIR)
    for path in sorted(relative_files(GENERATED_DIR)):
        print((GENERATED_DIR / path).relative_to(ROOT).as_posix())
    return 0


def image(path: Path) -> int:
    """Write the contract with every import and its comments, as ``buf lint`` reads it.

    buf cannot fetch ``google/api`` from its registry here, so it lints this image
    (``buf lint IMAGE --path agentmemory``) instead of building the protos itself.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        *include_args(),
        f"--descriptor_set_out={path}",
        "--include_imports",
        "--include_source_info",
        *(f.as_posix() for f in proto_files()),
    ]
    if protoc.main(args) != 0:
        msg = "protoc failed"
        raise SystemExit(msg)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, then write or check the stubs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare a fresh build with the stubs and exit 1 when it is stale",
    )
    parser.add_argument(
        "--image",
        type=Path,
        metavar="PATH",
        help="write the protos with their imports as a descriptor set image, for buf lint",
    )
    args = parser.parse_args(argv)
    if args.image is not None:
        return image(args.image)
    if args.check:
        stubs, records, methods = check(), generate_types.check(), generate_client.check()
        return stubs or records or methods
    return write() or generate_types.write() or generate_client.write()


if __name__ == "__main__":
    sys.exit(main())
