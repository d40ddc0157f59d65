"""The Translator Node Normalizer: which identifiers name the same entity.

`POST {url}/get_normalized_nodes` with `{"curies": [...], "conflate": true,
"drug_chemical_conflate": true}` answers, per CURIE, `null` (unknown) or
`{"id": {"identifier", "label"}, "equivalent_identifiers": [{"identifier", "label"}, ...],
"type": ["biolink:Gene", ...]}`. The client asks in batches, with a timeout, and remembers
every answer (unknown ones too), so each distinct CURIE is asked once per client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from graphwright.core.ids import normalize_curie
from graphwright.core.merge_rules import with_equivalents
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.http import fetch_bytes

LABEL = "Translator Node Normalizer"


@dataclass(frozen=True)
class NormalizedNode:
    """The Node Normalizer's answer for one CURIE."""

    id: str  # the preferred identifier
    label: str | None
    equivalent_ids: tuple[str, ...]  # every identifier of the entity, preferred first
    categories: tuple[str, ...]


class NodeNormalizer:
    """A batched, caching client of `/get_normalized_nodes`."""

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 20.0,
        batch_size: int = 500,
        conflate: bool = True,
    ) -> None:
        self._endpoint = url.rstrip("/") + "/get_normalized_nodes"
        self._transport = transport
        self._timeout = timeout
        self._batch_size = batch_size
        self._conflate = conflate
        self._answers: dict[str, NormalizedNode | None] = {}
        self.requests = 0

    async def normalize(self, curies: Iterable[str]) -> dict[str, NormalizedNode | None]:
        """Each CURIE's answer (None: the service does not know it). SourceUnavailable when
        the service cannot be reached or answers something else than its documented shape."""
        wanted = list(dict.fromkeys(curies))
        missing = [curie for curie in wanted if curie not in self._answers]
        for start in range(0, len(missing), self._batch_size):
            batch = missing[start : start + self._batch_size]
            self._answers.update(await self._ask(batch))
        return {curie: self._answers[curie] for curie in wanted}

    async def _ask(self, batch: list[str]) -> dict[str, NormalizedNode | None]:
        self.requests += 1
        body = await fetch_bytes(
            "POST",
            self._endpoint,
            label=LABEL,
            transport=self._transport,
            timeout=self._timeout,
            json={
                "curies": batch,
                "conflate": self._conflate,
                "drug_chemical_conflate": self._conflate,
                "description": False,
            },
        )
        try:
            reply = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise SourceUnavailable(f"{LABEL} answered with something other than JSON") from None
        if not isinstance(reply, dict):
            raise SourceUnavailable(f"{LABEL} answered with a JSON {type(reply).__name__}")
        return {curie: _node(reply.get(curie)) for curie in batch}


def _node(entry: Any) -> NormalizedNode | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), dict):
        return None
    preferred = entry["id"].get("identifier")
    if not isinstance(preferred, str) or not preferred:
        return None
    equivalents = [
        item["identifier"]
        for item in entry.get("equivalent_identifiers") or ()
        if isinstance(item, dict) and isinstance(item.get("identifier"), str)
    ]
    types = [item for item in entry.get("type") or () if isinstance(item, str)]
    label = entry["id"].get("label")
    return NormalizedNode(
        id=preferred,
        label=label if isinstance(label, str) else None,
        equivalent_ids=tuple(dict.fromkeys([preferred, *equivalents])),
        categories=tuple(types),
    )


async def normalize_graphs(
    graphs: list[tuple[str, dict[str, Any]]], client: NodeNormalizer
) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    """The graphs with the Node Normalizer's equivalent ids added to their nodes, and None; or,
    when the service cannot answer, the graphs unchanged and a note that says so (the merge
    then uses the equivalences present in the input)."""
    raw_ids = {node["id"] for _, graph in graphs for node in graph["nodes"]}
    asked = {raw: normalize_curie(raw) for raw in raw_ids}
    try:
        answers = await client.normalize(sorted(set(asked.values())))
    except SourceUnavailable as exc:
        return graphs, f"{exc}: merged with the equivalences in the input only"
    table = {
        raw: answer.equivalent_ids
        for raw, curie in asked.items()
        if (answer := answers.get(curie)) is not None
    }
    return [(name, with_equivalents(graph, table)) for name, graph in graphs], None
