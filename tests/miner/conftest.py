"""Miner fixtures: the real deepagents graph, LangGraph store and checkpointer, on SQLite and
PostgreSQL, the embedded knowledge base, and a scripted chat model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from graphwright.db import Database
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.agent_tools import MinerTools
from graphwright.miner.service import MinerService
from graphwright.settings import Settings
from tests.miner.scripted import ScriptedModel


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(
        home=tmp_path / "home",
        database_url=database_url,
        kb_sample_data=False,
        offline=True,
        miner_runs_per_window=100,
    )


@pytest.fixture
async def knowledge(settings: Settings, database: Database) -> AsyncIterator[KnowledgeService]:
    service = KnowledgeService.from_settings(database, open_backend(settings), settings)
    yield service
    await service.aclose()


MinerFactory = Callable[..., MinerService]


@pytest.fixture
async def make_miner(
    settings: Settings, database: Database, knowledge: KnowledgeService
) -> AsyncIterator[MinerFactory]:
    """A new MinerService (its own store and checkpointer connections, as a new process has)
    with a scripted model."""
    made: list[MinerService] = []

    def make(scripts: dict | None = None, **overrides: object) -> MinerService:
        model = ScriptedModel(scripts=scripts or {}) if scripts is not None else None
        own = settings.model_copy(update=overrides) if overrides else settings
        service = MinerService(database, own, tools=MinerTools(knowledge), model=model)
        made.append(service)
        return service

    yield make
    for service in made:
        await service.aclose()
