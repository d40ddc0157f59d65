"""Long-term memory: notes per domain tag in a persistent LangGraph store.

A run's `/memories/knowledge/<tag>/` paths go to a `StoreBackend` on the store, one namespace
per tag, so different tags never see each other's notes; everything else the agents write is
working state (`StateBackend`) and ends with the run. A failed store write is logged and comes
back to the agent as a tool error, and the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from deepagents.backends import CompositeBackend, StateBackend, StoreBackend
from deepagents.backends.protocol import EditResult, WriteResult
from deepagents.middleware.filesystem import FilesystemPermission
from langgraph.store.base import BaseStore

from graphwright.errors import InvalidInput, NotFound
from graphwright.miner.schemas import MemoryNote, MemoryNoteContent

logger = logging.getLogger(__name__)

MEMORY_ROOT = "/memories/"
NOTES = ("discovery-notes", "schema-notes", "validation-rules")
SHAPES_NOTE = "shapes"
NOTE_FILES = {**{name: f"{name}.md" for name in NOTES}, SHAPES_NOTE: "shapes.ttl"}
NAMESPACE = ("graphwright", "miner", "memories")

TEMPLATES = {
    "discovery-notes": """# Discovery Notes - {tag}

## Patterns

## Useful Sources

## Heuristics
""",
    "schema-notes": """# Schema Notes - {tag}

## Common Schemas

## Entity Mappings
""",
    "validation-rules": """# Validation Rules - {tag}

## Required Fields
- All entities must have: @type, name, identifier

## Duplicate Detection
- Check SPARQL for existing entities with same identifier

## Edge Cases
""",
}


def tag_dir(tag: str) -> str:
    return f"{MEMORY_ROOT}knowledge/{tag}/"


def note_path(tag: str, note: str) -> str:
    return f"{tag_dir(tag)}{NOTE_FILES[note]}"


def namespace(tag: str) -> tuple[str, ...]:
    return (*NAMESPACE, tag)


class GuardedStoreBackend(StoreBackend):
    """A StoreBackend whose failed writes become tool errors (logged), not a failed run."""

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        try:
            return await super().awrite(file_path, content)
        except Exception as exc:
            logger.warning("Memory write to %s failed: %s", file_path, exc)
            return WriteResult(error=f"Error: memory write failed: {type(exc).__name__}: {exc}")

    async def aedit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        try:
            return await super().aedit(file_path, old_string, new_string, replace_all)
        except Exception as exc:
            logger.warning("Memory edit of %s failed: %s", file_path, exc)
            return EditResult(error=f"Error: memory write failed: {type(exc).__name__}: {exc}")


def run_backend(store: BaseStore, tags: Sequence[str]) -> CompositeBackend:
    """Working files in the run's state; each tag's notes in its own store namespace."""
    routes = {
        tag_dir(tag): GuardedStoreBackend(
            namespace=lambda _rt, tag=tag: namespace(tag), store=store
        )
        for tag in tags
    }
    return CompositeBackend(default=StateBackend(), routes=routes)


def run_permissions(tags: Sequence[str]) -> list[FilesystemPermission]:
    """A run reads and writes its own tags' notes, and no other `/memories/` path."""
    own = [f"{tag_dir(tag)}**" for tag in tags]
    return [
        FilesystemPermission(operations=["read", "write"], paths=own),
        FilesystemPermission(operations=["read", "write"], paths=["/memories/**"], mode="deny"),
    ]


def _checked_note(note: str) -> str:
    if note not in NOTE_FILES:
        raise NotFound(f"No memory note '{note}': the notes are {', '.join(NOTE_FILES)}")
    return note


def _file_value(content: str, created_at: str | None = None) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    return {
        "content": content,
        "encoding": "utf-8",
        "created_at": created_at or now,
        "modified_at": now,
    }


class MemoryNotes:
    """The notes as the API and the service see them (the agents use the backend above)."""

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    async def seed(self, tags: Sequence[str]) -> None:
        """Give each tag the three notes in seed 001's structure, where it has none yet."""
        for tag in tags:
            for note, template in TEMPLATES.items():
                key = f"/{NOTE_FILES[note]}"
                if await self.store.aget(namespace(tag), key) is None:
                    await self.store.aput(
                        namespace(tag), key, _file_value(template.format(tag=tag))
                    )

    async def tags(self) -> list[str]:
        spaces = await self.store.alist_namespaces(prefix=NAMESPACE, max_depth=len(NAMESPACE) + 1)
        return sorted(space[len(NAMESPACE)] for space in spaces if len(space) > len(NAMESPACE))

    async def list(self) -> dict[str, list[MemoryNote]]:
        """Every tag with its notes."""
        listing: dict[str, list[MemoryNote]] = {}
        for tag in await self.tags():
            items = await self.store.asearch(namespace(tag), limit=100)
            listing[tag] = sorted(
                (self._note(tag, item.key, item.value) for item in items if self._known(item.key)),
                key=lambda entry: entry.note,
            )
        return listing

    async def read(self, tag: str, note: str) -> MemoryNoteContent:
        item = await self.store.aget(namespace(tag), f"/{NOTE_FILES[_checked_note(note)]}")
        if item is None:
            raise NotFound(f"Tag '{tag}' has no note '{note}' yet")
        return MemoryNoteContent(
            **self._note(tag, item.key, item.value).model_dump(), content=file_text(item.value)
        )

    async def write(self, tag: str, note: str, content: str) -> MemoryNoteContent:
        key = f"/{NOTE_FILES[_checked_note(note)]}"
        if not content.strip():
            raise InvalidInput("A note cannot be empty: write at least its heading")
        existing = await self.store.aget(namespace(tag), key)
        created = existing.value.get("created_at") if existing else None
        await self.store.aput(namespace(tag), key, _file_value(content, created))
        return await self.read(tag, note)

    async def text(self, tag: str, note: str) -> str | None:
        item = await self.store.aget(namespace(tag), f"/{NOTE_FILES[note]}")
        return file_text(item.value) if item else None

    @staticmethod
    def _known(key: str) -> bool:
        return key.lstrip("/") in NOTE_FILES.values()

    @staticmethod
    def _note(tag: str, key: str, value: dict[str, Any]) -> MemoryNote:
        filename = key.lstrip("/")
        note = next(name for name, file in NOTE_FILES.items() if file == filename)
        modified = value.get("modified_at")
        return MemoryNote(
            tag=tag,
            note=note,
            path=f"{tag_dir(tag)}{filename}",
            size=len(file_text(value).encode()),
            updated_at=datetime.fromisoformat(modified) if modified else None,
        )


def file_text(value: Any) -> str:
    """The text of a deepagents file value (`{"content": text or lines, ...}`), in the store or
    in a run's state; "" for anything else."""
    content = value.get("content", "") if isinstance(value, dict) else ""
    return "\n".join(content) if isinstance(content, list) else str(content)
