"""Appending 1 KB chunks to one artifact: does the cost of an append stay O(chunk)?

For each backend (SQLite file; PostgreSQL when reachable) this times:
- graphwright: `SqlArtifactStore.update(append=True)`, 1,000 appends, then 10,000, then 1,000
  again, each run to a fresh artifact. Each append is one transaction that also writes a version
  and an event. Target: the 10,000 run takes at most 15x the mean of the two 1,000 runs (linear
  is 10x); running the short one on both sides evens out the load of a shared machine. The
  per-append time of the first and the last 1,000 appends of the long run shows any growth.
- baseline: the seed's approach, a read-modify-write store that keeps an artifact's parts in
  one row and rewrites the concatenated text part on every append, so each append costs
  O(artifact). It runs 1,000 and 2,000 appends (10,000 would rewrite about 50 GB); its ratio
  for doubling the count shows the quadratic growth.
The full content is read back once at the end of every run and checked.

Run: .venv/bin/python benchmarks/artifact_append_bench.py [--quick]
     (PostgreSQL: GRAPHWRIGHT_BENCH_DATABASE_URL, default postgresql+psycopg://postgres@127.0.0.1:5432/test)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import JSON, Column, MetaData, String, Table, create_engine, select, text, update
from sqlalchemy.exc import OperationalError

from graphwright.artifacts.store import SqlArtifactStore
from graphwright.core.artifacts import Artifact, Part
from graphwright.db import Database

CHUNK = "x" * 1023 + "\n"
PG_URL = os.environ.get(
    "GRAPHWRIGHT_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
TARGET_RATIO = 15.0


def time_graphwright(database: Database, appends: int) -> tuple[float, float, float]:
    """Total seconds, and ms per append over the first and the last tenth of the run."""
    store = SqlArtifactStore(database)
    artifact_id = f"bench-{uuid.uuid4().hex}"
    store.create(Artifact(artifact_id=artifact_id, parts=[Part(text="")]), context_id="bench")
    chunk = Artifact(artifact_id=artifact_id, parts=[Part(text=CHUNK)])
    tenth = appends // 10
    marks = []
    started = time.perf_counter()
    for n in range(appends):
        if n % tenth == 0:
            marks.append(time.perf_counter())
        store.update(chunk, append=True)
    ended = time.perf_counter()
    assert store.get(artifact_id).artifact.parts[0].text == CHUNK * appends
    first = (marks[1] - marks[0]) / tenth * 1000
    last = (ended - marks[-1]) / tenth * 1000
    return ended - started, first, last


naive_metadata = MetaData()
naive_artifacts = Table(
    "naive_bench_artifacts",
    naive_metadata,
    Column("artifact_id", String(100), primary_key=True),
    Column("parts", JSON, nullable=False),
)


def time_naive(database: Database, appends: int) -> float:
    """The seed's store: load the artifact's parts, concatenate, write them all back."""
    naive_metadata.create_all(database.engine)
    artifact_id = f"naive-{uuid.uuid4().hex}"
    with database.write() as session:
        session.execute(
            naive_artifacts.insert().values(artifact_id=artifact_id, parts=[{"text": ""}])
        )
    row = naive_artifacts.c.artifact_id == artifact_id
    started = time.perf_counter()
    for _ in range(appends):
        with database.write() as session:
            parts = session.execute(
                select(naive_artifacts.c.parts).where(row).with_for_update()
            ).scalar_one()
            parts[0]["text"] += CHUNK
            session.execute(update(naive_artifacts).where(row).values(parts=parts))
    elapsed = time.perf_counter() - started
    with database.read() as session:
        stored = session.execute(select(naive_artifacts.c.parts).where(row)).scalar_one()
    assert stored[0]["text"] == CHUNK * appends
    return elapsed


@contextmanager
def sqlite_database() -> Iterator[Database]:
    with tempfile.TemporaryDirectory() as directory:
        database = Database(f"sqlite:///{Path(directory) / 'bench.db'}")
        try:
            yield database
        finally:
            database.dispose()


@contextmanager
def postgres_database() -> Iterator[Database]:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    database = Database(f"{PG_URL}{sep}options={quote(f'-csearch_path={schema}')}")
    try:
        yield database
    finally:
        database.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def postgres_reachable() -> bool:
    engine = create_engine(PG_URL)
    try:
        with engine.connect():
            return True
    except OperationalError:
        return False
    finally:
        engine.dispose()


def run_backend(
    name: str,
    open_database: Callable[[], AbstractContextManager[Database]],
    small: int,
    large: int,
    naive: int,
) -> bool:
    with open_database() as database:
        before, _, _ = time_graphwright(database, small)
        ours_large, first_ms, last_ms = time_graphwright(database, large)
        after, _, _ = time_graphwright(database, small)
        naive_small = time_naive(database, naive)
        naive_double = time_naive(database, naive * 2)
    ours_small = (before + after) / 2
    ratio = ours_large / ours_small
    print(f"\n{name}")
    print(
        f"  graphwright (chunk rows):  {small:>6,} appends {before:.2f} s before and "
        f"{after:.2f} s after; {large:>6,} appends {ours_large:.2f} s; "
        f"ratio {ratio:.1f} (target <= {TARGET_RATIO:g})"
    )
    print(
        f"  graphwright per append in the {large:,} run: first tenth {first_ms:.2f} ms, "
        f"last tenth {last_ms:.2f} ms"
    )
    print(
        f"  baseline (read-modify-write): {naive:>6,} appends {naive_small:8.2f} s   "
        f"{naive * 2:>6,} appends {naive_double:8.2f} s   ratio {naive_double / naive_small:5.1f} "
        "(for 2x the appends)"
    )
    print(
        f"  at {naive:,} appends: baseline {naive_small:.2f} s vs graphwright {ours_small:.2f} s "
        f"({naive_small / ours_small:.1f}x)"
    )
    return ratio <= TARGET_RATIO


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 vs 1,000 appends")
    args = parser.parse_args()
    small, large, naive = (100, 1_000, 100) if args.quick else (1_000, 10_000, 1_000)
    print(f"chunk: {len(CHUNK)} bytes; one artifact per run")
    ok = run_backend("SQLite", sqlite_database, small, large, naive)
    if postgres_reachable():
        ok = run_backend("PostgreSQL", postgres_database, small, large, naive) and ok
    else:
        print(f"\nPostgreSQL: not reachable at {PG_URL}; skipped")
    print("\nresult:", "within target" if ok else "OVER TARGET")


if __name__ == "__main__":
    main()
