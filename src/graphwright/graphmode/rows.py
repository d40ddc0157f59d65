"""Graph Mode rows in their other forms: API models, seed graph JSON, and the columns of both."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from graphwright.core.biolink import type_name
from graphwright.core.ids import normalize_curie
from graphwright.errors import InvalidInput
from graphwright.graphmode.limits import check_text
from graphwright.graphmode.models import GraphChangeset
from graphwright.graphmode.repository import Row
from graphwright.graphmode.schemas import (
    ChangesetSummary,
    Edge,
    Node,
)

NODE_TYPE_KEYS = ("category", "entityType", "type")
NODE_COLUMN_KEYS = frozenset({"id", "name", "label", "position", *NODE_TYPE_KEYS})
LINK_COLUMN_KEYS = frozenset({"id", "source", "target", "label", "type"})
NODE_FIELDS = ("label", "type", "data", "position")
EDGE_FIELDS = ("source", "target", "label", "type", "data")


def utc_now() -> datetime:
    return datetime.now(UTC)


def node_id(raw: str) -> str:
    normalized = normalize_curie(check_text(raw, "node id"))
    if not normalized:
        raise InvalidInput("A node id must not be blank")
    return normalized


def node_type(raw: str) -> str:
    """A node type in its one spelling, the Biolink class name where there is one."""
    normalized = type_name(raw)
    if not normalized:
        raise InvalidInput("A node type must not be blank")
    return normalized


def node_model(row: Row) -> Node:
    return Node.model_validate(row)


def edge_model(row: Row) -> Edge:
    return Edge.model_validate(row)


def changeset_summary(changeset: GraphChangeset) -> ChangesetSummary:
    return ChangesetSummary(
        version=changeset.version,
        kind=changeset.kind,  # type: ignore[arg-type]
        command=changeset.command,
        actor=changeset.actor,
        created_at=changeset.created_at,
        summary=changeset.summary,
        undo_state=changeset.undo_state,
        target_version=changeset.target_version,
        dropped_versions=changeset.dropped_versions,
    )


def differs(old: Row, new: Row, names: tuple[str, ...]) -> bool:
    return any(old.get(name) != new.get(name) for name in names)


def node_fields(seed: dict[str, Any]) -> Row:
    """Columns of a node from its seed-graph form."""
    kind: Any = next((seed[k] for k in NODE_TYPE_KEYS if seed.get(k)), "other")
    if isinstance(kind, list):
        kind = kind[0] if kind else "other"
    position = seed.get("position")
    return {
        "id": seed["id"],
        "label": str(seed.get("name") or seed.get("label") or seed["id"]),
        "type": type_name(str(kind)) or "Other",
        "data": {k: v for k, v in seed.items() if k not in NODE_COLUMN_KEYS},
        "position": position if isinstance(position, dict) else None,
    }


def link_fields(seed: dict[str, Any]) -> Row:
    return {
        "id": seed.get("id"),
        "source": seed["source"],
        "target": seed["target"],
        "label": seed.get("label"),
        "type": seed.get("type"),
        "data": {k: v for k, v in seed.items() if k not in LINK_COLUMN_KEYS},
    }


def seed_node(row: Row) -> dict[str, Any]:
    seed = {"id": row["id"], "name": row["label"], "category": row["type"], **row["data"]}
    if row.get("position"):
        seed["position"] = row["position"]
    return seed


def seed_link(row: Row, *, with_id: bool = True) -> dict[str, Any]:
    seed: dict[str, Any] = {"source": row["source"], "target": row["target"]}
    if with_id:
        seed["id"] = row["id"]
    if row["label"] is not None:
        seed["label"] = row["label"]
    if row["type"] is not None:
        seed["type"] = row["type"]
    seed.update(row["data"])
    seed.setdefault("evidence", [])
    return seed
