"""A small in-memory full-text index (SQLite FTS5, bm25 ranking) for the bundled sample corpora."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping

from graphwright.errors import InvalidInput

OPERATORS = {"AND", "OR", "NOT", "NEAR"}


def fts_query(text: str) -> str:
    """A PubMed-style query as an FTS5 OR-query of quoted words (field tags, operators dropped).

    OR keeps recall on a small corpus; bm25 still ranks records matching more words first.
    """
    text = re.sub(r"\[[^\]]*\]", " ", text)
    words = [word for word in re.findall(r"\w+", text) if word.upper() not in OPERATORS]
    return " OR ".join(f'"{word}"' for word in words)


class FullTextIndex:
    """Documents with weighted text fields, searched by relevance; ids come back best first."""

    def __init__(
        self, weights: Mapping[str, float], documents: Iterable[tuple[str, dict[str, str]]]
    ):
        self.fields = list(weights)
        self._weights = ", ".join(str(float(weights[field])) for field in self.fields)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(self.fields)
        self._db.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, {columns}, "
            "tokenize='porter unicode61')"
        )
        placeholders = ", ".join("?" for _ in range(len(self.fields) + 1))
        self._db.executemany(
            f"INSERT INTO docs VALUES ({placeholders})",
            [(doc_id, *(fields.get(f, "") for f in self.fields)) for doc_id, fields in documents],
        )

    def search(self, query: str, limit: int) -> list[str]:
        match = fts_query(query)
        if not match:
            raise InvalidInput(f"The query {query!r} has no words to search for")
        with self._lock:
            rows = self._db.execute(
                f"SELECT doc_id FROM docs WHERE docs MATCH ? "
                f"ORDER BY bm25(docs, 0.0, {self._weights}) LIMIT ?",
                (match, limit),
            ).fetchall()
        return [doc_id for (doc_id,) in rows]
