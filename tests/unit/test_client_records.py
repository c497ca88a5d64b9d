"""The records the Python client answers with (``agent_memory_client.types``, generated
from the contract): one per message an RPC answers with, plain Python values both ways
(aware UTC datetimes, timedeltas, enums, tuples, dicts, None for what is unset), the
message one attribute away, and equality, repr and ``replace`` that see only the fields.
The generator's shapes the contract does not use yet (maps, bytes, oneofs, nested
declarations, repeated enums and times) are checked on a contract made here."""

from __future__ import annotations

import dataclasses
import importlib.util
import pickle
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.descriptor import Descriptor

from agent_memory_client import _records, types
from agentmemory.v1 import decision_pb2, memory_pb2, memory_service_pb2, recall_service_pb2
from tests.support import agentmemory_rpcs

WHEN = datetime(2026, 4, 30, 16, 20, 0, 123456, tzinfo=UTC)


def full_memory() -> memory_pb2.Memory:
    """A memory with every kind of field set."""
    message = memory_pb2.Memory(
        id="m-1",
        scope=memory_pb2.SCOPE_AGENT,
        agent_id="planner",
        key="timezone",
        value="Europe/Lisbon",
        pinned=True,
        importance=40,
        source=memory_pb2.MEMORY_SOURCE_MEMORIZE,
        read_only=True,
        tags=["home", "travel"],
        confidence=0.0,  # set, though zero
        groundings=[memory_pb2.Grounding(message_position=1, quote="Lisbon", raw_event_index=0)],
        created_at=WHEN,
        updated_at=WHEN + timedelta(seconds=1),
        etag='W/"2"',
    )
    message.metadata.update({"origin": "chat", "turns": [1, 2]})
    return message


def test_every_answer_of_the_contract_has_a_record_of_its_fields() -> None:
    for rpc in agentmemory_rpcs():
        record = types.RECORDS[rpc.output_type.full_name]
        assert record.MESSAGE.DESCRIPTOR is rpc.output_type
        names = [f.name for f in dataclasses.fields(record)]  # type: ignore[arg-type]
        assert names == [f.name for f in rpc.output_type.fields], rpc.name


def test_a_record_holds_plain_python_values() -> None:
    memory = types.Memory.from_proto(full_memory())
    assert (memory.source, memory.scope) == (types.MemorySource.MEMORIZE, types.Scope.AGENT)
    assert isinstance(memory.source, types.MemorySource)
    assert memory.created_at == WHEN
    assert memory.created_at is not None
    assert memory.created_at.tzinfo is UTC
    assert memory.tags == ("home", "travel")
    assert memory.confidence == 0.0  # an optional field set to zero is not unset
    assert memory.metadata == {"origin": "chat", "turns": [1.0, 2.0]}
    (grounding,) = memory.groundings
    assert isinstance(grounding, types.Grounding)
    assert (grounding.quote, grounding.raw_event_index, grounding.raw_start_character) == (
        "Lisbon",
        0,
        None,
    )
    # Unset: a message field, an optional scalar, a time.
    assert (grounding.metadata, memory.expire_time, memory.last_used_time) == (None, None, None)
    assert types.Memory.from_proto(memory_pb2.Memory()).confidence is None

    session = types.ActiveSession.from_proto(
        memory_pb2.ActiveSession(session_age={"seconds": 90, "nanos": 500_000_000})
    )
    assert session.session_age == timedelta(seconds=90.5)


def test_a_record_keeps_its_message_and_round_trips() -> None:
    message = full_memory()
    memory = types.Memory.from_proto(message)
    assert memory.proto is message
    assert types.Memory.from_proto(memory.proto) == memory
    # Made from its fields alone, it builds the same message.
    fields = {f.name: getattr(memory, f.name) for f in dataclasses.fields(memory)}
    made = types.Memory(**fields)
    assert made == memory
    assert made.proto == message
    assert made.proto is made.proto  # built once
    assert pickle.loads(pickle.dumps(memory)) == memory
    assert "proto" not in dataclasses.asdict(memory)


def test_a_record_is_frozen_and_replace_builds_a_fresh_message() -> None:
    memory = types.Memory.from_proto(full_memory())
    with pytest.raises(dataclasses.FrozenInstanceError):
        memory.value = "Europe/Porto"  # type: ignore[misc]
    moved = dataclasses.replace(memory, value="Europe/Porto")
    assert moved != memory
    assert moved.proto.value == "Europe/Porto"
    assert moved.proto.created_at.ToDatetime(UTC) == WHEN


def test_a_record_made_by_hand_takes_keywords_and_defaults() -> None:
    grounding = types.Grounding(message_position=1, end_character=16)
    assert grounding.proto == memory_pb2.Grounding(message_position=1, end_character=16)
    assert grounding == types.Grounding.from_proto(grounding.proto)
    with pytest.raises(TypeError):
        types.Grounding(1)  # type: ignore[misc]
    naive = types.Memory(created_at=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="time zone"):
        _ = naive.proto


def test_a_repr_shows_the_fields_that_differ_from_their_defaults() -> None:
    summary = types.OwnerSummary(id="coder", memory_count=3, memory_enabled=False)
    assert repr(summary) == "OwnerSummary(id='coder', memory_count=3)"
    match = types.RecallResponse.from_proto(
        recall_service_pb2.RecallResponse(content="x", scope=memory_pb2.SCOPE_USER)
    )
    assert repr(match) == "RecallResponse(content='x', scope=Scope.USER)"
    assert repr(types.ForgetCounts()) == "ForgetCounts()"


def test_an_enum_number_this_client_does_not_know_is_kept() -> None:
    message = decision_pb2.Decision(id="d-1")
    message.resolution_status = 7  # type: ignore[assignment]  # a newer server's
    decision = types.Decision.from_proto(message)
    assert decision.resolution_status.name == "UNRECOGNIZED_7"
    assert decision.resolution_status.value == 7
    assert types.Decision.from_proto(message) == decision
    assert types.ResolutionStatus(7) is decision.resolution_status
    assert dataclasses.replace(decision, id="d-2").proto.resolution_status == 7


def test_any_answer_reads_as_its_record() -> None:
    response = memory_service_pb2.GetMemoryResponse(memory=full_memory())
    record = types.record_of(response)
    assert isinstance(record, types.GetMemoryResponse)
    assert record.memory == types.Memory.from_proto(full_memory())
    with pytest.raises(TypeError, match=r"no record of agentmemory\.v1\.MemoryOwner"):
        types.record_of(memory_pb2.MemoryOwner())


# -- the generator's shapes, on a contract of its own ------------------------------------


def generate_types() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "generate_types.py"
    if str(path.parent) not in sys.path:  # as when it runs: its neighbours import by name
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("generate_types", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # for its dataclasses
    spec.loader.exec_module(module)
    return module


SHAPES = """
name: "agentmemory/v1/generator_shapes.proto"
package: "agentmemory.v1"
dependency: "google/protobuf/timestamp.proto"
syntax: "proto3"
message_type {
  name: "Shapes"
  field { name: "data" number: 1 label: LABEL_OPTIONAL type: TYPE_BYTES }
  field { name: "counts" number: 2 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".agentmemory.v1.Shapes.CountsEntry" }
  field { name: "inner" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".agentmemory.v1.Shapes.Inner" }
  field { name: "kinds" number: 4 label: LABEL_REPEATED type: TYPE_ENUM
          type_name: ".agentmemory.v1.Shapes.Kind" }
  field { name: "times" number: 5 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".google.protobuf.Timestamp" }
  field { name: "children" number: 6 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".agentmemory.v1.Shapes.ChildrenEntry" }
  field { name: "label" number: 7 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0 }
  field { name: "number" number: 8 label: LABEL_OPTIONAL type: TYPE_INT64 oneof_index: 0 }
  field { name: "weight" number: 9 label: LABEL_OPTIONAL type: TYPE_DOUBLE oneof_index: 1
          proto3_optional: true }
  nested_type {
    name: "CountsEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
    options { map_entry: true }
  }
  nested_type {
    name: "ChildrenEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".agentmemory.v1.Shapes.Inner" }
    options { map_entry: true }
  }
  nested_type {
    name: "Inner"
    field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
  enum_type {
    name: "Kind"
    value { name: "KIND_UNSPECIFIED" number: 0 }
    value { name: "KIND_ROUND" number: 1 }
    value { name: "KIND_2D" number: 2 }
  }
  oneof_decl { name: "choice" }
  oneof_decl { name: "_weight" }
}
"""


def shapes_contract() -> tuple[Descriptor, Any]:
    # The default pool, where the well-known types' classes are those of this process.
    pool = descriptor_pool.Default()
    pool.Add(text_format.Parse(SHAPES, descriptor_pb2.FileDescriptorProto()))
    descriptor = pool.FindMessageTypeByName("agentmemory.v1.Shapes")
    return descriptor, message_factory.GetMessageClass(descriptor)


def test_the_generator_writes_maps_bytes_oneofs_and_nested_declarations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    generator = generate_types()
    descriptor, shapes_class = shapes_contract()
    inner = descriptor.nested_types_by_name["Inner"]
    kind = descriptor.enum_types_by_name["Kind"]
    assert generator.member_names(kind) == ["UNSPECIFIED", "ROUND", "KIND_2D"]
    source = "".join(
        [
            generator.enum_text(kind, {}),
            generator.record_text(inner, {}),
            generator.record_text(descriptor, {}),
        ]
    )
    assert "class ShapesInner(Record[generator_shapes_pb2.Shapes.Inner])" in source
    # The records as a module of their own, importing what types.py imports.
    module = ModuleType("shapes_records")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    module.__dict__.update(
        {name: getattr(_records, name) for name in dir(_records) if not name.startswith("__")}
    )
    module.__dict__.update(
        dataclass=dataclasses.dataclass,
        dataclass_field=dataclasses.field,
        generator_shapes_pb2=SimpleNamespace(Shapes=shapes_class),
    )
    code = compile("from __future__ import annotations\n" + source, "<shapes>", "exec")
    exec(code, module.__dict__)
    shapes, shapes_inner, shapes_kind = module.Shapes, module.ShapesInner, module.ShapesKind

    message = shapes_class(
        data=b"\x00\x01",
        counts={"a": 1},
        inner={"name": "core"},
        kinds=[1, 2],
        times=[WHEN],
        children={"x": {"name": "child"}},
        number=5,
    )
    record = shapes.from_proto(message)
    assert record.data == b"\x00\x01"
    assert record.counts == {"a": 1}
    assert record.inner == shapes_inner(name="core")
    assert record.kinds == (shapes_kind.ROUND, shapes_kind.KIND_2D)
    assert record.times == (WHEN,)
    assert record.children == {"x": shapes_inner(name="child")}
    assert (record.label, record.number, record.weight) == (None, 5, None)
    fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    assert shapes(**fields).proto == message
    empty = shapes.from_proto(shapes_class())
    assert (empty.counts, empty.inner, empty.kinds, empty.data) == ({}, None, (), b"")
    assert shapes().proto == shapes_class()
