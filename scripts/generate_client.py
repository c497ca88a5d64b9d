#!/usr/bin/env python3
"""Write the Python client's methods, blocking and asyncio, from the one declaration
of each operation in ``clients/python/src/agent_memory_client/_ops.py``.

    python scripts/generate_client.py          # rewrite agent_memory_client/_methods.py
    python scripts/generate_client.py --check  # exit 1 when it is stale

``scripts/generate_protos.py`` runs it too (and ``--check`` checks it), so
``make generate`` and ``make check-generated`` cover it.

An operation is a public function of ``_ops.py`` whose return annotation is
``Op[T]`` (a unary call answering ``T``), ``Pages[T]`` (a listing fetched page
after page) or ``Stream[T]`` (a streamed answer). Each becomes a method of the same
name, parameters (plus a keyword-only ``timeout``) and docstring on both
``MemoryMethods`` (returning ``T``, ``Iterator[T]`` or the stream) and
``AsyncMemoryMethods`` (awaited ``T``, ``AsyncGenerator[T, None]`` or the async
stream). ``@with_result(Response)`` on an operation adds ``<name>_result``: the same
call, answering the whole ``Response``. The output is sorted and formatted with ruff,
as the rest of the code is.
"""

from __future__ import annotations

import ast
import builtins
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import generate_types
from generated_file import GeneratedFile

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "python" / "src" / "agent_memory_client"
OPS = PACKAGE / "_ops.py"
METHODS = PACKAGE / "_methods.py"
KINDS = ("Op", "Pages", "Stream")
DOC_WIDTH = 84  # a method's docstring lines, indented, stay within ruff's 100
# The stream class each flavour wraps a streamed answer of this message in.
STREAMS = {"types.RecallResponse": ("RecallStream", "AsyncRecallStream")}

HEADER = '''\
# Written by scripts/generate_client.py from _ops.py; never edit it by hand: change
# _ops.py, then run `make generate` (or `python scripts/generate_client.py`).
"""Every operation ``_ops`` declares, as a method of both clients: blocking on
:class:`MemoryMethods`, awaited on :class:`AsyncMemoryMethods`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator

from agent_memory_client import _ops
from agent_memory_client._transport import (
    AsyncRecallStream,
    AsyncTransport,
    RecallStream,
    SyncTransport,
)
{imports}


class MemoryMethods(SyncTransport):
    """The operations of :class:`~agent_memory_client.MemoryClient`."""
{sync}


class AsyncMemoryMethods(AsyncTransport):
    """The operations of :class:`~agent_memory_client.AsyncMemoryClient`."""
{aio}
'''


@dataclass(frozen=True)
class Operation:
    """One operation of ``_ops.py``, as its source says it."""

    name: str
    kind: str
    answer: ast.expr
    arguments: ast.arguments
    doc: str
    result: ast.expr | None

    def parameters(self) -> list[str]:
        """The method's parameters after ``self``, ending with ``timeout``."""
        args = self.arguments
        if args.vararg or args.kwarg:
            FILE.fail(f"{self.name}: an operation takes no *args or **kwargs")
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        rendered = [_parameter(a, d) for a, d in zip(positional, defaults, strict=True)]
        if args.posonlyargs:
            rendered.insert(len(args.posonlyargs), "/")
        rendered.append("*")
        keyword = zip(args.kwonlyargs, args.kw_defaults, strict=True)
        rendered += [_parameter(a, d) for a, d in keyword]
        if "timeout" in {a.arg for a in (*positional, *args.kwonlyargs)} or any(
            a.arg == "self" for a in positional
        ):
            FILE.fail(f"{self.name}: `self` and `timeout` are the method's own parameters")
        return [*rendered, "timeout: float | None = None"]

    def call(self) -> str:
        """The call of the operation that forwards the method's arguments."""
        args = self.arguments
        forwarded = [a.arg for a in (*args.posonlyargs, *args.args)]
        forwarded += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
        return f"_ops.{self.name}({', '.join(forwarded)})"

    def expressions(self) -> list[ast.AST]:
        """Every expression the methods copy from the declaration."""
        args = self.arguments
        found: list[ast.AST] = [self.answer]
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.annotation is not None:
                found.append(arg.annotation)
        found += [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
        if self.result is not None:
            found.append(self.result)
        return found


def _parameter(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += f": {ast.unparse(arg.annotation)}"
    if default is not None:
        text += f" = {ast.unparse(default)}" if arg.annotation else f"={ast.unparse(default)}"
    return text


def _result_of(node: ast.FunctionDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Name)
            and decorator.func.id == "with_result"
        ):
            (response,) = decorator.args
            return response
        FILE.fail(f"{node.name}: the only decorator an operation takes is @with_result(...)")
    return None


def operations(tree: ast.Module) -> list[Operation]:
    """The operations of ``_ops.py``, in source order."""
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        returns = node.returns
        if not (
            isinstance(returns, ast.Subscript)
            and isinstance(returns.value, ast.Name)
            and returns.value.id in KINDS
        ):
            continue
        doc = ast.get_docstring(node)
        if not doc:
            FILE.fail(f"{node.name}: an operation's docstring is its method's; write one")
        assert doc is not None
        if '"""' in doc or "\\" in doc:
            FILE.fail(f'{node.name}: keep backslashes and """ out of the docstring')
        found.append(
            Operation(node.name, returns.value.id, returns.slice, node.args, doc, _result_of(node))
        )
    if not found:
        FILE.fail(f"no operations in {OPS.relative_to(ROOT)}")
    return found


def origins(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Each name ``_ops.py`` defines or imports: the module to import it from, and
    its name there."""
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            for alias in node.names:
                table[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            FILE.fail("import modules in _ops.py as `from PACKAGE import MODULE`")
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.ClassDef | ast.FunctionDef):
            targets = node.targets if isinstance(node, ast.Assign) else [node]
            for target in targets:
                name = getattr(target, "id", None) or getattr(target, "name", None)
                if isinstance(name, str):
                    table[name] = ("agent_memory_client._ops", name)
    return table


def imports(found: list[Operation], table: dict[str, tuple[str, str]]) -> str:
    """The imports of every name the copied signatures use (ruff sorts them)."""
    names: set[str] = set()
    for op in found:
        for expression in op.expressions():
            names |= {n.id for n in ast.walk(expression) if isinstance(n, ast.Name)}
    lines = []
    for name in sorted(names - set(dir(builtins))):
        if name not in table:
            FILE.fail(
                f"{name!r} is used by an operation but neither defined nor imported in _ops.py"
            )
        module, original = table[name]
        alias = f" as {name}" if original != name else ""
        lines.append(f"from {module} import {original}{alias}")
    return "\n".join(lines)


def response_fields(expression: ast.expr, table: dict[str, tuple[str, str]]) -> list[str]:
    """The field names of the response record ``expression`` names, read from its
    message (the records are generated from the same descriptors)."""
    if not (
        isinstance(expression, ast.Attribute)
        and isinstance(expression.value, ast.Name)
        and table.get(expression.value.id) == ("agent_memory_client", "types")
    ):
        FILE.fail(f"name a response as types.Record, not {ast.unparse(expression)}")
    assert isinstance(expression, ast.Attribute)
    records = generate_types.records()
    if expression.attr not in records:
        FILE.fail(f"no record {expression.attr} in agent_memory_client.types")
    return [field.name for field in records[expression.attr].fields]


def _listing(names: list[str]) -> str:
    quoted = [f"``.{name}``" for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _method(
    name: str, parameters: list[str], returns: str, doc: str, body: str, *, awaited: bool
) -> str:
    keyword = "async def" if awaited else "def"
    lines = doc.splitlines()
    indented = [f"        {line}" if line else "" for line in lines[1:]]
    docstring = "\n".join([f'"""{lines[0]}', *indented])
    return (
        f"\n    {keyword} {name}(self, {', '.join(parameters)}) -> {returns}:\n"
        f'        {docstring}"""\n'
        f"        {body}\n"
    )


def methods(op: Operation, table: dict[str, tuple[str, str]], *, awaited: bool) -> str:
    """The method (or two, with ``_result``) of one operation for one client."""
    answer = ast.unparse(op.answer)
    parameters = op.parameters()
    if op.kind == "Op":
        run = f"self._run({op.call()}, timeout)"
        text = _method(
            op.name,
            parameters,
            answer,
            op.doc,
            f"return await {run}" if awaited else f"return {run}",
            awaited=awaited,
        )
    elif op.kind == "Pages":
        returns = f"AsyncGenerator[{answer}, None]" if awaited else f"Iterator[{answer}]"
        body = f"return self._pages({op.call()}, timeout)"
        text = _method(op.name, parameters, returns, op.doc, body, awaited=False)
    else:
        if answer not in STREAMS:
            FILE.fail(f"{op.name}: no stream class for {answer}; add one to STREAMS")
        stream = STREAMS[answer][1 if awaited else 0]
        body = f"return {stream}(self._start_stream({op.call()}, timeout))"
        text = _method(op.name, parameters, stream, op.doc, body, awaited=False)
    if op.result is not None:
        if op.kind != "Op":
            FILE.fail(f"{op.name}: only a unary operation takes @with_result")
        response = ast.unparse(op.result)
        fields = _listing(response_fields(op.result, table))
        doc = textwrap.fill(
            f"The same call as :meth:`{op.name}`, answering the whole response: {fields}.",
            width=DOC_WIDTH,
        )
        run = f"self._run({op.call()}.answering({response}), timeout)"
        text += _method(
            f"{op.name}_result",
            parameters,
            response,
            doc,
            f"return await {run}" if awaited else f"return {run}",
            awaited=awaited,
        )
    return text


def render() -> str:
    """The text ``_methods.py`` must have."""
    tree = ast.parse(OPS.read_text(encoding="utf-8"), filename=str(OPS))
    found = operations(tree)
    table = origins(tree)
    text = HEADER.format(
        imports=imports(found, table),
        sync="".join(methods(op, table, awaited=False) for op in found),
        aio="".join(methods(op, table, awaited=True) for op in found),
    )
    text = FILE.ruff(["check", "--fix-only", "--select", "I", "--quiet"], text)
    return FILE.ruff(["format", "--quiet"], text)


FILE = GeneratedFile(METHODS, "scripts/generate_client.py", render)
check, write = FILE.check, FILE.write


if __name__ == "__main__":
    sys.exit(FILE.main(sys.argv[1:], __doc__))
