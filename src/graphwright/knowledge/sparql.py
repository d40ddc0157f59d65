"""SPARQL answers: collected within limits, and written in SPARQL 1.1 result formats.

Which queries may run at all is `query_check.py`'s business; where they run, `query_workers.py`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
import pyoxigraph as ox

from graphwright.errors import InvalidInput
from graphwright.knowledge.query_check import Form
from graphwright.knowledge.schemas import QueryAnswer, Term

RESULT_MEDIA_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_MEDIA_TYPES = {
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
}


def term_json(term: Any) -> Term:
    """An Oxigraph term as SPARQL JSON results write it."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    return {"type": "triple", "value": str(term)}


class Deadline:
    """A time limit checked between rows, so that a query past it stops streaming."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self._end:
            raise QueryTimeout(self.seconds)


class QueryTimeout(InvalidInput):
    """A query past its time limit, which was stopped (HTTP 422)."""

    code = "query_timeout"

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"The query ran past its time limit of {seconds:g} s; make it more selective "
            "(a subject, a type, a LIMIT)"
        )


def answer_from_oxigraph(result: Any, *, limit: int, deadline: Deadline) -> QueryAnswer:
    """Collect an Oxigraph result, at most `limit` rows (or triples), checking `deadline`."""
    if isinstance(result, ox.QueryBoolean):
        return QueryAnswer(form="ask", boolean=bool(result), row_limit=limit)
    if isinstance(result, ox.QueryTriples):
        return graph_answer(result, limit=limit, deadline=deadline)
    variables = [variable.value for variable in result.variables]
    rows, truncated = _take(
        (
            {name: term_json(solution[name]) for name in variables if solution[name] is not None}
            for solution in result
        ),
        limit,
        deadline,
    )
    return QueryAnswer(
        form="select", variables=variables, rows=rows, truncated=truncated, row_limit=limit
    )


def graph_answer(triples: Iterable[Any], *, limit: int, deadline: Deadline) -> QueryAnswer:
    """A CONSTRUCT or DESCRIBE answer from Oxigraph triples (or quads, whose graph is dropped)."""
    lines, truncated = _take(
        (f"{t.subject} {t.predicate} {t.object} ." for t in triples), limit, deadline
    )
    return QueryAnswer(form="graph", triples="\n".join(lines), truncated=truncated, row_limit=limit)


def _take(items: Iterator[Any], limit: int, deadline: Deadline) -> tuple[list[Any], bool]:
    taken = []
    for item in items:
        if len(taken) == limit:
            return taken, True
        deadline.check()
        taken.append(item)
    return taken, False


def serialize_answer(answer: QueryAnswer, media_type: str) -> bytes:
    """The answer in a SPARQL 1.1 Protocol result format (JSON, XML, CSV, TSV, or an RDF
    syntax for CONSTRUCT/DESCRIBE)."""
    if answer.form == "graph":
        triples = ox.parse((answer.triples or "").encode(), ox.RdfFormat.N_TRIPLES)
        return ox.serialize(triples, format=GRAPH_MEDIA_TYPES[media_type])
    as_json = orjson.dumps(answer.sparql_json())
    if RESULT_MEDIA_TYPES[media_type] == ox.QueryResultsFormat.JSON:
        return as_json
    parsed = ox.parse_query_results(as_json, ox.QueryResultsFormat.JSON)
    return parsed.serialize(format=RESULT_MEDIA_TYPES[media_type])


def negotiate(accept: str | None, form: Form) -> str:
    """The media type to answer in, from an Accept header (first acceptable one wins)."""
    offered = GRAPH_MEDIA_TYPES if form == "graph" else RESULT_MEDIA_TYPES
    default = "application/n-triples" if form == "graph" else "application/sparql-results+json"
    for part in (accept or "").split(","):
        media = part.split(";")[0].strip().lower()
        if media in offered:
            return media
        if media in ("*/*", "application/*", "text/*", ""):
            return default
    if accept and accept.strip():
        raise NotAcceptable(accept, list(offered))
    return default


class NotAcceptable(InvalidInput):
    code = "not_acceptable"

    def __init__(self, accept: str, offered: list[str]) -> None:
        super().__init__(f"Cannot answer in '{accept}'; offered: {', '.join(offered)}")
