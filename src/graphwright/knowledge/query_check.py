"""Which SPARQL queries may run: judged by a SPARQL parser, never by scanning the text.

A query is parsed by rdflib's SPARQL 1.1 grammar into its parse tree and algebra. A `SERVICE`
anywhere in the tree (the only form that makes a store fetch from an address) is refused, as is
every update form, whatever the spelling: comments, escapes, prefixed names, case, `\\u`
escapes and `BASE` are all the parser's business. What the parser cannot read is refused too,
with the line and column where it stopped. The check is CPU work on untrusted text, so it runs
in the query workers (`query_workers.py`), never on the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pyparsing import ParseBaseException, ParseResults
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue

from graphwright.errors import InvalidInput

Form = Literal["select", "ask", "graph"]
# Longer than any query a person or a model writes; the parser's work grows with the text.
MAX_QUERY_CHARS = 100_000
_FORMS: dict[str, Form] = {
    "SelectQuery": "select",
    "AskQuery": "ask",
    "ConstructQuery": "graph",
    "DescribeQuery": "graph",
}

_UPDATE_NAMES = {"Modify": "DELETE/INSERT"}


@dataclass(frozen=True)
class CheckedQuery:
    """A read-only query the parser accepted: its form and, for SELECT, its variables."""

    text: str
    form: Form
    kind: str  # SELECT, CONSTRUCT, ASK or DESCRIBE, as a DKG node names it
    variables: tuple[str, ...] = ()


class InvalidQuery(InvalidInput):
    """The text is not a SPARQL query (HTTP 400), with where the parser stopped."""

    code = "invalid_query"
    http_status = 400

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.details: dict[str, Any] = (
            {"position": {"line": line, "column": column}} if line is not None else {}
        )


class QueryNotAllowed(InvalidInput):
    """A well-formed query of a kind no caller may run here (HTTP 400)."""

    code = "query_not_allowed"
    http_status = 400


@lru_cache(maxsize=512)  # the same query is asked again (a console, a model's retry): parse once
def check_query(text: str) -> CheckedQuery:
    """The query, checked: InvalidQuery or QueryNotAllowed for anything but a read-only query
    of this knowledge base."""
    if not text.strip():
        raise InvalidQuery("The SPARQL query is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"The SPARQL query is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}"
        )
    try:
        tree = parseQuery(text)
    except ParseBaseException as exc:
        if update := _update_name(text):
            raise QueryNotAllowed(
                "Only SELECT, CONSTRUCT, ASK and DESCRIBE queries are allowed; this is an "
                f"update ({update}). Knowledge is published through publication requests, "
                "never by SPARQL"
            ) from None
        raise InvalidQuery(
            f"Syntax error at line {exc.lineno}, column {exc.col}: {_reason(exc)}",
            line=exc.lineno,
            column=exc.col,
        ) from None
    except RecursionError:
        raise InvalidQuery("The SPARQL query is nested too deeply to read") from None
    if _names(tree) & {"ServiceGraphPattern"}:
        raise QueryNotAllowed(
            "SERVICE (a federated query) is not allowed: queries read this knowledge base "
            "only, and never make the server fetch from another address"
        )
    return _checked(text, tree)


def _checked(text: str, tree: Any) -> CheckedQuery:
    name = tree[1].name
    try:
        algebra = translateQuery(tree).algebra
    except RecursionError:
        raise InvalidQuery("The SPARQL query is nested too deeply to read") from None
    except Exception as exc:  # rdflib reports semantic errors (GROUP BY, scope) as plain errors
        raise InvalidQuery(f"The SPARQL query is not valid: {exc}") from None
    variables = tuple(str(v) for v in algebra.get("PV") or ()) if name == "SelectQuery" else ()
    return CheckedQuery(
        text=text,
        form=_FORMS[name],
        kind=name.removesuffix("Query").upper(),
        variables=variables,
    )


def _update_name(text: str) -> str | None:
    """The first operation of a SPARQL update (`INSERT DATA`, `DROP`), or None if the text is
    no update either."""
    try:
        operations = parseUpdate(text).request
    except (ParseBaseException, RecursionError):
        return None
    if not operations:
        return None
    name = operations[0].name
    return (
        _UPDATE_NAMES.get(name)
        or "".join(f" {c}" if c.isupper() and i else c for i, c in enumerate(name)).upper()
    )


def _reason(exc: ParseBaseException) -> str:
    """pyparsing's message without its own position suffix, which the caller words itself."""
    return str(exc.msg).split("  (at char")[0][:200]


def _names(node: Any) -> set[str]:
    """The name of every rule in a parse tree, iteratively (a deep tree must not recurse)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CompValue):
            names.add(item.name)
            stack.extend(item.values())
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, ParseResults)):
            stack.extend(item)
    return names
