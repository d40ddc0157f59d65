"""A SPARQL server's answer to a person's or a model's query is read off the event loop.

The answer's size is the query's choice (up to the row limit, and a server may send more than
that), so reading it is user-controlled CPU work: it runs in a thread, as the embedded store's
work does, and the event loop only waits.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from graphwright.knowledge.backends import stores
from graphwright.knowledge.backends.stores import RemoteSparqlStore

QUERIES = {
    "select": "SELECT ?n WHERE { VALUES ?n { 1 2 3 } }",
    "graph": "CONSTRUCT { <urn:a> <urn:b> ?n } WHERE { VALUES ?n { 1 2 3 } }",
}


@pytest.mark.parametrize("form", sorted(QUERIES))
async def test_the_answer_is_read_in_a_thread_not_on_the_event_loop(
    oxigraph_server: str, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    readers: list[threading.Thread] = []
    for name in ("answer_from_oxigraph", "graph_answer"):
        original = getattr(stores, name)

        def reading(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            readers.append(threading.current_thread())
            return _original(*args, **kwargs)

        monkeypatch.setattr(stores, name, reading)
    store = RemoteSparqlStore(f"{oxigraph_server}/query", None)
    try:
        answer = await store.user_query(QUERIES[form], limit=10, timeout=30)
    finally:
        await store.aclose()
    assert len(answer.rows) == 3 if form == "select" else answer.triples.count("urn:a") == 3
    assert readers and threading.main_thread() not in readers
