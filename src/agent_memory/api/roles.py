"""The role each RPC needs: one table, checked by the server interceptor before any
servicer code runs.

A method missing from the table needs ``orchestrator`` (it fails closed), and a unit
test holds the table to exactly the RPCs of the services' descriptors. The service
comments in ``proto/`` tell clients the same.

Finer rules live with the use cases: UpsertMemory needs ``editor`` for a MANUAL
memory and ``orchestrator`` for any other source. An editor may pin, unpin and
delete memories of every source (people in the memory panel clear stale rows), and
may call UpdateMemory on them under the usual rule that only MANUAL memories change
key, value or importance. An editor may also reset an agent's active session, as the
panel offers; recording runs stays the orchestrator's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from agent_memory.domain.identity import Principal, Role, require_role

_MEMORY = "/agentmemory.v1.MemoryService/"
_BLOCK = "/agentmemory.v1.BlockService/"
_RECALL = "/agentmemory.v1.RecallService/"
_DECISION = "/agentmemory.v1.DecisionService/"

METHOD_ROLES: Mapping[str, Role] = MappingProxyType(
    {
        # MemoryService
        _MEMORY + "GetMemory": Role.READER,
        _MEMORY + "ListMemories": Role.READER,
        _MEMORY + "ListLearnings": Role.READER,
        _MEMORY + "ListMemoryEvents": Role.READER,
        _MEMORY + "GetAgentSettings": Role.READER,
        _MEMORY + "GetWorkspaceSettings": Role.READER,
        _MEMORY + "GetUsage": Role.READER,
        _MEMORY + "GetActiveSession": Role.READER,
        _MEMORY + "GetConversation": Role.READER,
        _MEMORY + "ListConversations": Role.READER,
        _MEMORY + "GetExtractionJob": Role.READER,
        _MEMORY + "GetCaller": Role.READER,
        _MEMORY + "ListAgents": Role.READER,
        _MEMORY + "ListWorkspaces": Role.READER,
        _MEMORY + "UpsertMemory": Role.EDITOR,  # MANUAL only; other sources: orchestrator
        _MEMORY + "UpdateMemory": Role.EDITOR,
        _MEMORY + "PinMemory": Role.EDITOR,
        _MEMORY + "DeleteMemory": Role.EDITOR,
        _MEMORY + "Memorize": Role.ORCHESTRATOR,
        _MEMORY + "RecordLearning": Role.ORCHESTRATOR,
        _MEMORY + "UpdateAgentSettings": Role.ORCHESTRATOR,
        _MEMORY + "UpdateWorkspaceSettings": Role.ORCHESTRATOR,
        _MEMORY + "ExtractMemories": Role.ORCHESTRATOR,
        _MEMORY + "RecordRunSession": Role.ORCHESTRATOR,
        _MEMORY + "ListAgentRuns": Role.READER,
        # A person in the memory panel resets an agent's session that has grown long.
        _MEMORY + "ResetActiveSession": Role.EDITOR,
        # A person has their own user forgotten; agents and workspaces are the
        # orchestrator's to forget.
        _MEMORY + "ForgetUser": Role.EDITOR,
        _MEMORY + "ForgetAgent": Role.ORCHESTRATOR,
        _MEMORY + "ForgetWorkspace": Role.ORCHESTRATOR,
        # BlockService
        _BLOCK + "GetBlock": Role.READER,
        _BLOCK + "ListBlocks": Role.READER,
        _BLOCK + "ListBlockVersions": Role.READER,
        _BLOCK + "WriteBlock": Role.EDITOR,
        _BLOCK + "DeleteBlock": Role.EDITOR,
        # RecallService
        _RECALL + "Recall": Role.READER,
        _RECALL + "RenderPrompt": Role.READER,
        _RECALL + "GetRecallStatus": Role.READER,
        # DecisionService
        _DECISION + "GetDecision": Role.READER,
        _DECISION + "ListRecentDecisions": Role.READER,
        _DECISION + "ListReexaminations": Role.READER,
        _DECISION + "RenderReexaminationPrompt": Role.READER,
        _DECISION + "RegisterCardType": Role.ORCHESTRATOR,
        _DECISION + "RecordDecision": Role.ORCHESTRATOR,
        _DECISION + "ResolveDecision": Role.ORCHESTRATOR,
        _DECISION + "RecordReexamination": Role.ORCHESTRATOR,
    }
)


def required_role(method: str) -> Role:
    """The role a full method name (``/package.Service/Method``) needs; orchestrator
    for a method the table does not name."""
    return METHOD_ROLES.get(method, Role.ORCHESTRATOR)


def authorize(principal: Principal, method: str) -> None:
    """Refuse the call unless the caller's role allows the method.

    Raises:
        PermissionDenied: reason ``ROLE_FORBIDS``.
    """
    require_role(principal, required_role(method), method.rsplit("/", 1)[-1])
