"""``agent-memory mcp``: the memory service as tools an agent calls, over the Model
Context Protocol (the official ``mcp`` SDK), built on the Python client.

It is a client of a running service, speaking for one agent (and optionally one
workspace) with one key. Every refusal of the service (a size limit, a secret in a
value, a read-only memory, a compare-and-set conflict, an unreachable service)
comes back as a tool error whose text tells the model what happened and what to do;
the server itself never fails on one.

What a tool returns reaches the model: every stored string in it (a key, a value, a
recalled line, a decision's compact line) passes through the renderer's
:func:`~agent_memory.render.text.inline`, one item a line, after the fields the service
set (owner, source, flags, id), so stored text cannot forge another item's fields. A
core block is the exception: core_memory_read shows it as stored, for the model to
quote back, with only what could read as its fence's tag escaped.
"""

# The tools and what they return (tools), the server that exposes them over stdio or
# HTTP (server), and the bearer token that guards the HTTP endpoint (auth).
