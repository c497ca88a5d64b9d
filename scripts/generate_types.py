#!/usr/bin/env python3
"""Write the Python client's records, ``agent_memory_client/types.py``, from the
contract's descriptors: what the clients answer with, as plain Python values.

    python scripts/generate_types.py          # rewrite agent_memory_client/types.py
    python scripts/generate_types.py --check  # exit 1 when it is stale

``scripts/generate_protos.py`` runs it too (and ``--check`` checks it), so
``make generate`` and ``make check-generated`` cover it.

Every message an RPC of ``agentmemory.v1`` answers with, and every message of the
package those carry, becomes a frozen, slotted dataclass of the same name and fields,
keyword-only, each defaulting to the field's proto default; each enum they use
becomes a :class:`~agent_memory_client._records.ProtoEnum` whose members drop the
enum's prefix. Values become plain Python: a ``Timestamp`` an aware UTC ``datetime``,
a ``Duration`` a ``timedelta``, a ``Struct`` a ``dict``, a message of the package its
record, a repeated field a tuple, a map a dict, and a message or ``optional`` field
that is unset ``None``. ``from_proto`` reads a message into its record, keeping the
message as ``.proto``; a record made by hand builds its message from its fields. The
comments of the protos (``descriptors.binpb``) become the docstrings. The output is
sorted and formatted with ruff, as the rest of the code is.
"""

from __future__ import annotations

import importlib
import keyword
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from generated_file import GeneratedFile
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

ROOT = Path(__file__).resolve().parent.parent
TYPES = ROOT / "clients" / "python" / "src" / "agent_memory_client" / "types.py"
GENERATED = ROOT / "clients" / "python" / "generated"
PACKAGE = "agentmemory.v1"
DESCRIPTOR_SET = GENERATED / "agentmemory" / "v1" / "descriptors.binpb"
WIDTH = 100  # ruff's line length

# Names a record already has, which no field of a message may take.
RESERVED = {"proto", "from_proto", "MESSAGE"}

SCALARS = {
    FieldDescriptor.TYPE_DOUBLE: ("float", "0.0"),
    FieldDescriptor.TYPE_FLOAT: ("float", "0.0"),
    FieldDescriptor.TYPE_BOOL: ("bool", "False"),
    FieldDescriptor.TYPE_STRING: ("str", '""'),
    FieldDescriptor.TYPE_BYTES: ("bytes", 'b""'),
    **{
        kind: ("int", "0")
        for kind in (
            FieldDescriptor.TYPE_INT32,
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_UINT32,
            FieldDescriptor.TYPE_UINT64,
            FieldDescriptor.TYPE_SINT32,
            FieldDescriptor.TYPE_SINT64,
            FieldDescriptor.TYPE_FIXED32,
            FieldDescriptor.TYPE_FIXED64,
            FieldDescriptor.TYPE_SFIXED32,
            FieldDescriptor.TYPE_SFIXED64,
        )
    },
}

# The well-known messages a record holds as Python values: the type, and the
# functions of ``_records`` that read the message and write it back.
WELL_KNOWN = {
    "google.protobuf.Timestamp": ("datetime", "datetime_of", "timestamp_of"),
    "google.protobuf.Duration": ("timedelta", "timedelta_of", "duration_of"),
    "google.protobuf.Struct": ("dict[str, Any]", "dict_of", "struct_of"),
}

HEADER = '''\
# Written by scripts/generate_types.py from the contract (proto/agentmemory/v1); never
# edit it by hand: change the protos, then run `make generate`.
"""The records the clients answer with: every message an RPC answers with, and every
message those carry, as a frozen dataclass of plain Python values (aware UTC
datetimes, timedeltas, enums, tuples, dicts, and None for what is unset), with its
protobuf message one attribute away (``.proto``).

    from agent_memory_client.types import Memory, MemorySource

    memory = client.get_memory(memory_id)
    if memory.source is MemorySource.MANUAL and memory.expire_time is not None:
        print(memory.key, memory.expire_time.isoformat())

Records compare by their fields; ``Memory.from_proto(message)`` reads a message into
its record, and a record made by hand (``Grounding(message_position=1)``) builds its
message from its fields when asked for ``.proto``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from typing import Any, Self

from google.protobuf.message import Message

from agent_memory_client._records import (
    ProtoEnum,
    Record,
    datetime_of,
    dict_of,
    duration_of,
    struct_of,
    timedelta_of,
    timestamp_of,
)
{imports}
{enums}
{records}

# Every record by the full name of its message.
RECORDS: dict[str, type[Record[Any]]] = {{
{table}
}}


def record_of(message: Message) -> Record[Any]:
    """The record of any message of :data:`RECORDS`, e.g. what ``call()`` answers."""
    try:
        record = RECORDS[message.DESCRIPTOR.full_name]
    except KeyError:
        msg = f"no record of {{message.DESCRIPTOR.full_name}}"
        raise TypeError(msg) from None
    return record.from_proto(message)
'''


# -- the contract ------------------------------------------------------------------------


def contract_files() -> list[str]:
    """The modules of the generated stubs of the package, as importable names."""
    folder = GENERATED / Path(*PACKAGE.split("."))
    return sorted(f"{PACKAGE}.{p.stem}" for p in folder.glob("*_pb2.py"))


def answers() -> list[Descriptor]:
    """The message each RPC of the package answers with."""
    found = []
    for module in contract_files():
        file = importlib.import_module(module).DESCRIPTOR
        for service in file.services_by_name.values():
            found += [method.output_type for method in service.methods]
    if not found:
        FILE.fail(f"no services in {PACKAGE}")
    return found


def is_map(field: FieldDescriptor) -> bool:
    message = field.message_type
    return message is not None and message.GetOptions().map_entry


def element_fields(field: FieldDescriptor) -> list[FieldDescriptor]:
    """The field itself, or a map's key and value."""
    if is_map(field):
        return [
            field.message_type.fields_by_name["key"],
            field.message_type.fields_by_name["value"],
        ]
    return [field]


def answered() -> tuple[list[Descriptor], list[EnumDescriptor]]:
    """The messages the RPCs answer with and every message and enum of the package
    they hold, in the order of the files and their declarations."""
    messages: dict[str, Descriptor] = {}
    enums: dict[str, EnumDescriptor] = {}
    waiting = answers()
    while waiting:
        message = waiting.pop()
        if message.full_name in messages:
            continue
        messages[message.full_name] = message
        for field in message.fields:
            for element in element_fields(field):
                if element.enum_type is not None:
                    enums[element.enum_type.full_name] = element.enum_type
                held = element.message_type
                if held is not None and held.full_name.startswith(f"{PACKAGE}."):
                    waiting.append(held)
    return sorted(messages.values(), key=declared), sorted(enums.values(), key=declared)


def declared(d: Descriptor | EnumDescriptor) -> tuple[str, int, str]:
    """Where ``d`` is declared: its file, the place there of its outermost message (or
    of itself, a top-level enum), then its name."""
    top: Descriptor | EnumDescriptor = d
    while top.containing_type is not None:
        top = top.containing_type
    kind = (
        top.file.message_types_by_name
        if isinstance(top, Descriptor)
        else top.file.enum_types_by_name
    )
    return d.file.name, list(kind).index(top.name), d.full_name


def comments() -> dict[str, str]:
    """The leading comment of every message, enum, field and enum value of the
    package, by full name (a field's and a value's under its parent's)."""
    found: dict[str, str] = {}
    files = descriptor_pb2.FileDescriptorSet()
    files.ParseFromString(DESCRIPTOR_SET.read_bytes())
    for file in files.file:
        said = {
            tuple(where.path): where.leading_comments
            for where in file.source_code_info.location
            if where.leading_comments
        }
        # The paths of FileDescriptorProto: message_type 4, enum_type 5; in a message,
        # field 2, nested_type 3, enum_type 4; in an enum, value 2.
        for i, m in enumerate(file.message_type):
            _message_comments(m, f"{file.package}.{m.name}", (4, i), said, found)
        for i, e in enumerate(file.enum_type):
            _enum_comments(e, f"{file.package}.{e.name}", (5, i), said, found)
    return found


Where = tuple[int, ...]


def _message_comments(
    m: descriptor_pb2.DescriptorProto,
    name: str,
    path: Where,
    said: dict[Where, str],
    found: dict[str, str],
) -> None:
    found[name] = said.get(path, "")
    for i, f in enumerate(m.field):
        found[f"{name}.{f.name}"] = said.get((*path, 2, i), "")
    for i, nested in enumerate(m.nested_type):
        _message_comments(nested, f"{name}.{nested.name}", (*path, 3, i), said, found)
    for i, e in enumerate(m.enum_type):
        _enum_comments(e, f"{name}.{e.name}", (*path, 4, i), said, found)


def _enum_comments(
    e: descriptor_pb2.EnumDescriptorProto,
    name: str,
    path: Where,
    said: dict[Where, str],
    found: dict[str, str],
) -> None:
    found[name] = said.get(path, "")
    for i, value in enumerate(e.value):
        found[f"{name}.{value.name}"] = said.get((*path, 2, i), "")


# -- names ------------------------------------------------------------------------------


def class_name(d: Descriptor | EnumDescriptor) -> str:
    """A record's or enum's name: the message's, nested ones joined to their parents'
    (``Outer.Inner`` is ``OuterInner``)."""
    return "".join(d.full_name.removeprefix(f"{PACKAGE}.").split("."))


def proto_class(d: Descriptor) -> str:
    """The generated message class, as the output imports its module."""
    module = d.file.name.removesuffix(".proto").rsplit("/", 1)[-1] + "_pb2"
    return f"{module}.{d.full_name.removeprefix(f'{d.file.package}.')}"


def member_names(e: EnumDescriptor) -> list[str]:
    """The members' names without the enum's prefix (``MEMORY_SOURCE_MANUAL`` is
    ``MANUAL``), kept whole where the rest would not be a name."""
    prefix = "".join(f"_{c}" if c.isupper() else c.upper() for c in e.name).lstrip("_") + "_"
    names = []
    for value in e.values:
        short = value.name.removeprefix(prefix)
        usable = short.isidentifier() and not keyword.iskeyword(short) and not short[0].isdigit()
        names.append(short if usable else value.name)
    if len(set(names)) != len(names):
        FILE.fail(f"{e.full_name}: members share a name once the prefix is dropped")
    return names


# -- what a field becomes ----------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """How one value of a field reads and writes: its Python type, its default, and
    the expressions that read it from the message and write it back (``{}`` stands
    for the value)."""

    annotation: str
    default: str
    read: str
    write: str
    plain: bool  # read and written as it is
    writes_none: bool  # the write of None is None (an unset field)


def value_shape(field: FieldDescriptor, where: str) -> Shape:
    if field.enum_type is not None:
        e = field.enum_type
        name = class_name(e)
        # A repeated field's default is [], a singular one's its first value's number.
        number = field.default_value if isinstance(field.default_value, int) else 0
        numbers = [v.number for v in e.values]
        zero = member_names(e)[numbers.index(number) if number in numbers else 0]
        return Shape(
            name, f"{name}.{zero}", f"{name}({{}})", "{}.number", plain=False, writes_none=False
        )
    held = field.message_type
    if held is None:
        annotation, default = SCALARS[field.type]
        return Shape(annotation, default, "{}", "{}", plain=True, writes_none=True)
    if held.full_name in WELL_KNOWN:
        annotation, reader, writer = WELL_KNOWN[held.full_name]
        return Shape(
            annotation, "None", f"{reader}({{}})", f"{writer}({{}})", plain=False, writes_none=True
        )
    if not held.full_name.startswith(f"{PACKAGE}."):
        FILE.fail(f"{where}: no Python value for {held.full_name}; add it to WELL_KNOWN")
    name = class_name(held)
    return Shape(
        name, "None", f"{name}.from_proto({{}})", "{}.proto", plain=False, writes_none=False
    )


@dataclass(frozen=True)
class Field:
    """One field of a record: its declaration, and its reading and writing."""

    name: str
    annotation: str
    default: str
    read: str
    write: str


def record_field(field: FieldDescriptor, owner: Descriptor) -> Field:
    name = field.name
    where = f"{owner.full_name}.{name}"
    if name in RESERVED or keyword.iskeyword(name) or name.startswith("_"):
        FILE.fail(f"{where}: a record cannot have a field of this name")
    source, target = f"message.{name}", f"self.{name}"
    if is_map(field):
        key, value = (value_shape(f, where) for f in element_fields(field))
        read = f"dict({source})"
        write = target
        if not value.plain:
            read = f"{{k: {value.read.format('v')} for k, v in {source}.items()}}"
            write = f"{{k: {value.write.format('v')} for k, v in {target}.items()}}"
        annotation = f"dict[{key.annotation}, {value.annotation}]"
        return Field(name, annotation, "dataclass_field(default_factory=dict)", read, write)
    shape = value_shape(field, where)
    if field.is_repeated:
        read, write = f"tuple({source})", target
        if not shape.plain:
            read = f"tuple({shape.read.format('v')} for v in {source})"
            write = f"[{shape.write.format('v')} for v in {target}]"
        return Field(name, f"tuple[{shape.annotation}, ...]", "()", read, write)
    if field.has_presence:
        read = f'{shape.read.format(source)} if message.HasField("{name}") else None'
        write = shape.write.format(target)
        if not shape.writes_none:
            write = f"None if {target} is None else {write}"
        return Field(name, f"{shape.annotation} | None", "None", read, write)
    return Field(
        name, shape.annotation, shape.default, shape.read.format(source), shape.write.format(target)
    )


# -- the output --------------------------------------------------------------------------


def docstring(text: str, indent: int) -> str:
    """A comment of the protos as a docstring at ``indent``, lines too long for ruff
    wrapped (the others kept as written)."""
    lines = textwrap.dedent(text.strip("\n")).strip().splitlines()
    if not lines:
        return ""
    if '"""' in text:
        FILE.fail(f'keep """ out of the protos\' comments: {lines[0]}')
    width = WIDTH - indent - 6  # room for the quotes
    wrapped = []
    for line in (line.rstrip().replace("\\", "\\\\") for line in lines):
        if len(line) <= width:
            wrapped.append(line)
        else:
            margin = " " * (len(line) - len(line.lstrip()))
            wrapped += textwrap.wrap(line, width, subsequent_indent=margin)
    if wrapped[-1].endswith('"'):
        wrapped[-1] += " "  # a quote would run into the closing ones
    pad = " " * indent
    body = "\n".join(f"{pad}{line}" if line else "" for line in wrapped[1:])
    return f'{pad}"""{wrapped[0]}' + (f"\n{body}" if body else "") + '"""\n'


def enum_text(e: EnumDescriptor, said: dict[str, str]) -> str:
    name = class_name(e)
    lines = [f"\n\nclass {name}(ProtoEnum):\n", docstring(said.get(e.full_name) or e.full_name, 4)]
    for value, member in zip(e.values, member_names(e), strict=True):
        lines.append(f"\n    {member} = {value.number}\n")
        lines.append(docstring(said.get(f"{e.full_name}.{value.name}", ""), 4))
    return "".join(lines)


def record_text(m: Descriptor, said: dict[str, str]) -> str:
    name, message = class_name(m), proto_class(m)
    fields = [record_field(f, m) for f in m.fields]
    lines = [
        "\n\n@dataclass(frozen=True, slots=True, kw_only=True, repr=False)\n",
        f"class {name}(Record[{message}]):\n",
        docstring(said.get(m.full_name) or m.full_name, 4),
        f"\n    MESSAGE = {message}\n",
    ]
    for f in fields:
        lines.append(f"\n    {f.name}: {f.annotation} = {f.default}\n")
        lines.append(docstring(said.get(f"{m.full_name}.{f.name}", ""), 4))
    reads = "".join(f"            {f.name}={f.read},\n" for f in fields)
    writes = "".join(f"            {f.name}={f.write},\n" for f in fields)
    lines.append(
        "\n    @classmethod\n"
        f"    def from_proto(cls, message: {message}) -> Self:\n"
        f"        return cls(\n{reads}        )._kept(message)\n"
        f"\n    def _to_proto(self) -> {message}:\n"
        f"        return {message}(\n{writes}        )\n"
    )
    return "".join(lines)


def records() -> dict[str, Descriptor]:
    """Every record's name and its message."""
    messages, _ = answered()
    table = {class_name(m): m for m in messages}
    if len(table) != len(messages):
        FILE.fail("two records would share a name")
    return table


def render() -> str:
    """The text ``types.py`` must have."""
    messages, enums = answered()
    names = [class_name(d) for d in (*messages, *enums)]
    if len(set(names)) != len(names):
        FILE.fail("two records or enums would share a name")
    said = comments()
    modules = sorted({proto_class(m).split(".")[0] for m in messages})
    text = HEADER.format(
        imports="\n".join(f"from {PACKAGE} import {module}" for module in modules),
        enums="".join(enum_text(e, said) for e in enums),
        records="".join(record_text(m, said) for m in messages),
        table="\n".join(f'    "{m.full_name}": {class_name(m)},' for m in messages),
    )
    # Unused imports (a contract without maps needs no `dataclass_field`) go, then the format.
    text = FILE.ruff(["check", "--fix-only", "--select", "I,F401", "--quiet"], text)
    return FILE.ruff(["format", "--quiet"], text)


FILE = GeneratedFile(TYPES, "scripts/generate_types.py", render)
check, write = FILE.check, FILE.write


if __name__ == "__main__":
    sys.exit(FILE.main(sys.argv[1:], __doc__))
