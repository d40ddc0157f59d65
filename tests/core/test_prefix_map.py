"""The prefix map is built once per package version and read from the user cache after that."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphwright.core import prefix_map


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GRAPHWRIGHT_CACHE_DIR", str(tmp_path))
    prefix_map.namespaces.cache_clear()
    yield tmp_path
    prefix_map.namespaces.cache_clear()  # later tests read the real cache again


def test_the_map_is_built_once_then_read_from_the_cache(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = prefix_map.namespaces()
    (cached,) = fresh_cache.glob("prefix-map-*.json")
    assert list(built) == prefix_map.build()
    prefix_map.namespaces.cache_clear()

    def refuse() -> None:
        raise AssertionError("built again although the cache holds the map")

    monkeypatch.setattr(prefix_map, "_build", refuse)
    assert prefix_map.namespaces() == built
    assert cached.exists()


def test_a_damaged_cache_is_built_again(fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefix_map, "_build", lambda: [["X", "https://x.example/", [], [], []]])
    path = prefix_map._cache_path()
    path.write_text('[["X", "https://x')  # a write cut short
    assert [space.prefix for space in prefix_map.namespaces()] == ["X"]
    assert path.read_text().startswith('[["X","https://x.example/"')
