"""The machinery of a Graph Mode write: one transaction, one new version, its change log entry
and its event. Each concern of GraphService builds on GraphServiceBase."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol, TypeVar

from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound
from graphwright.graphmode import history_words
from graphwright.graphmode.events import GraphEvents
from graphwright.graphmode.limits import GraphLimits, check_text
from graphwright.graphmode.models import GraphChangeset
from graphwright.graphmode.ops import Op, flatten_inverse
from graphwright.graphmode.repository import GraphRepository, ProjectRow, Row
from graphwright.graphmode.rows import changeset_summary, utc_now
from graphwright.graphmode.schemas import (
    ChangesetSummary,
    NodeSelection,
    Written,
)

T = TypeVar("T")
PLAN_ATTEMPTS = 3  # then the write is planned inside its transaction


class VersionConflict(Conflict):
    """The write named a version the graph is no longer at."""

    code = "version_conflict"


class GraphMoved(Exception):
    """A write prepared from the graph at one version found it at another (internal: the
    writer prepares again)."""


class Prepared(Protocol):
    """Work prepared outside the write transaction (an ImportPlan): from the graph at `version`,
    dated `now`, the time the version it makes is stamped with."""

    version: int
    now: datetime


P = TypeVar("P", bound=Prepared)
# Plans a write from the graph's repository, its project id (None: it has no graph yet), its
# version, and the time the write is dated.
Planner = Callable[[GraphRepository, int | None, int, datetime], P]


@dataclass
class Change:
    """The write in progress: the ops written so far and their inverse."""

    repo: GraphRepository
    project_id: int
    version: int
    now: datetime
    forward: list[Op] = field(default_factory=list)
    inverse_runs: list[list[Op]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    kind: str = "edit"
    target: GraphChangeset | None = None
    # Rows as this write leaves them (None: gone), where its plan read or wrote them.
    nodes_after: dict[str, Row | None] = field(default_factory=dict)
    edges_after: dict[str, Row | None] = field(default_factory=dict)

    def record(self, forward: list[Op], inverse: list[Op]) -> None:
        self.forward.extend(forward)
        self.inverse_runs.append(inverse)

    @property
    def inverse(self) -> list[Op]:
        return flatten_inverse(self.inverse_runs)


class GraphServiceBase:
    """The database, the events hub, the limits, and the write transaction."""

    def __init__(
        self, db: Database, events: GraphEvents, limits: GraphLimits | None = None
    ) -> None:
        self._db = db
        self._events = events
        self.limits = limits or GraphLimits()

    def _check_texts(self, values: Sequence[str] | None, field: str) -> None:
        for index, value in enumerate(values or ()):
            self.limits.type(value, f"{field}[{index}]")

    def _check_selection(self, selection: NodeSelection) -> None:
        if selection.ids is not None:
            self.limits.ids(selection.ids)
        self._check_texts(selection.types, "types")
        self._check_texts(selection.exclude_types, "excludeTypes")
        if selection.type is not None:
            self.limits.type(selection.type, "type")

    def _write(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        build: Callable[[Change], T],
        *,
        prepared: Prepared | None = None,
        pipelined: bool = False,
    ) -> Written[T]:
        """Run `build` in one write transaction that makes the graph's next version.

        `prepared` is the work `build` writes, prepared outside the transaction; GraphMoved says
        the graph has moved on since. `pipelined`: see `Database.write` (not for many rows,
        which go by COPY outside a pipeline).
        """
        conversation_key(conversation_id)
        now = prepared.now if prepared is not None else utc_now()
        with self._db.write(pipelined=pipelined) as session:
            repo = GraphRepository(session)
            project = repo.lock_project(conversation_id, now)
            if expected_version is not None and expected_version != project.version:
                raise VersionConflict(
                    f"This graph is at version {project.version}, not {expected_version}; "
                    "reload it and try again",
                    current_version=project.version,
                )
            if prepared is not None and prepared.version != project.version:
                raise GraphMoved(conversation_id)
            change = Change(repo, project.id, project.version + 1, now)
            try:
                result = build(change)
            except NotFound:
                if project.version == 0:  # the graph was about to be made by this very write
                    raise NotFound(
                        f"Conversation '{conversation_id}' has no graph yet, so nothing in it "
                        "can be changed; check the conversation id (GET /api/graphs lists them)"
                    ) from None
                raise
            self._record(change, command, actor)
            self._events.publish(
                session,
                {
                    "conversationId": conversation_id,
                    "version": change.version,
                    "command": command,
                    "actor": actor,
                    "summary": change.summary,
                },
            )
        return Written(result, change.version)

    def _write_planned(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        plan: Planner[P],
        apply: Callable[[Change, P], T],
        *,
        write: Callable[..., Written[Any]] | None = None,
        attempts: int = PLAN_ATTEMPTS,
        pipelined: bool = False,
    ) -> Written[Any]:
        """Write work planned outside the transaction (`apply` writes the plan), planning again
        while the graph moves on meanwhile, and after `attempts` inside the transaction (at once
        with none). `write` is `_write` or `_write_summary`; `pipelined` as for `_write`."""
        write = write or self._write
        for _ in range(attempts):
            planned = self._planned(conversation_id, plan)
            try:
                return write(
                    conversation_id,
                    command,
                    actor,
                    expected_version,
                    partial(apply, plan=planned),
                    prepared=planned,
                    pipelined=pipelined,
                )
            except GraphMoved:
                continue

        def build(change: Change) -> T:
            planned = plan(change.repo, change.project_id, change.version - 1, change.now)
            return apply(change, planned)

        return write(conversation_id, command, actor, expected_version, build, pipelined=pipelined)

    def _planned(self, conversation_id: str, plan: Planner[P]) -> P:
        """`plan` run against the graph as it stands, in a read transaction."""
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = repo.project(conversation_key(conversation_id))
            if project is None:
                return plan(repo, None, 0, utc_now())
            return plan(repo, project.id, project.version, utc_now())

    def _record(self, change: Change, command: str, actor: str) -> None:
        repo = change.repo
        change.summary.update(Counter(op["op"] for op in change.forward))
        if change.kind == "edit":
            change.summary[history_words.ABOUT] = _about(change)
        repo.add_changeset(
            {
                "project_id": change.project_id,
                "version": change.version,
                "kind": change.kind,
                "command": command,
                "actor": actor,
                "created_at": change.now,
                "forward": change.forward,
                "inverse": change.inverse,
                "summary": change.summary,
                "undo_state": "applied" if change.kind == "edit" else None,
                "target_version": change.target.version if change.target else None,
            },
            drops_redo=change.kind == "edit",
        )
        repo.set_version(change.project_id, change.version, change.now)

    def _write_summary(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        build: Callable[[Change], None],
        *,
        prepared: Prepared | None = None,
        pipelined: bool = False,
    ) -> Written[ChangesetSummary]:
        captured: list[Change] = []
        targets: list[ChangesetSummary] = []

        def run(change: Change) -> None:
            build(change)
            captured.append(change)
            if change.target is not None:  # read while its session is open
                targets.append(changeset_summary(change.target))

        written = self._write(
            conversation_id,
            command,
            actor,
            expected_version,
            run,
            prepared=prepared,
            pipelined=pipelined,
        )
        change = captured[0]
        summary = ChangesetSummary(
            version=change.version,
            kind=change.kind,  # type: ignore[arg-type]
            command=command,
            actor=actor,
            created_at=change.now,
            summary=change.summary,
            target_version=change.target.version if change.target else None,
            undo_state="applied" if change.kind == "edit" else None,
        )
        summary.description = history_words.describe(summary, targets[0] if targets else None)
        return Written(summary, written.version)


def _about(change: Change) -> dict[str, Any]:
    repo, project_id = change.repo, change.project_id
    return history_words.about(
        change.forward,
        change.inverse,
        partial(_rows_after, change.nodes_after, partial(repo.nodes_by_ids, project_id)),
        partial(_rows_after, change.edges_after, partial(repo.edges_by_ids, project_id)),
    )


def _rows_after(
    known: dict[str, Row | None], read: Callable[[list[str]], dict[str, Row]], ids: set[str]
) -> dict[str, Row]:
    """The rows `ids` name after the write: as its plan left them where it knows them (a read
    costs a round trip in a pipelined write), read otherwise."""
    unknown = [i for i in ids if i not in known]
    found = {i: row for i in ids if (row := known.get(i)) is not None}
    return {**found, **(read(unknown) if unknown else {})}


def conversation_key(conversation_id: str) -> str:
    if not conversation_id or len(conversation_id) > 200:
        raise InvalidInput("A conversation id must have 1 to 200 characters")
    return check_text(conversation_id, "conversation id")


def existing_project(repo: GraphRepository, conversation_id: str) -> ProjectRow:
    project = repo.project(conversation_key(conversation_id))
    if project is None:
        raise NotFound(f"Conversation '{conversation_id}' has no graph yet")
    return project


def no_version(version: int, current: int) -> NotFound:
    return NotFound(f"Version {version} does not exist; this graph has versions 0 to {current}")
