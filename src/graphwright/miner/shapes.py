"""SHACL shapes for the miner's candidates, checked with pyshacl.

The default shape ships beside this module (`default_shapes.ttl`: a type, a name and an
identifier) and targets each top-level object of a candidate. A domain tag's own shapes live in
its memory as `shapes.ttl` and are checked together with it, with their own targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Literal

from pyshacl import validate
from pyshacl.errors import ReportableRuntimeError
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH

from graphwright.errors import InvalidInput

DEFAULT_SHAPE = URIRef("urn:graphwright:miner#CandidateShape")
Severity = Literal["Violation", "Warning", "Info"]


@dataclass(frozen=True)
class ShapeResult:
    """One SHACL result: which node, which property (when the path is a single one), and why."""

    focus: str
    path: str | None
    message: str
    severity: Severity


@cache
def default_shapes() -> str:
    """The default shape's Turtle, as shipped in the package."""
    return resources.files("graphwright.miner").joinpath("default_shapes.ttl").read_text()


@lru_cache(maxsize=64)
def _turtle(text: str) -> Graph:
    """A shapes text parsed once: candidates are checked against the same shapes many times.
    The graph is shared; only read it."""
    try:
        return Graph().parse(data=text, format="turtle")
    except (SyntaxError, ValueError) as exc:
        raise InvalidInput(f"The domain shapes (shapes.ttl) are not valid Turtle: {exc}") from None


def _shapes_graph(domain_shapes: Sequence[str], roots: Sequence[str]) -> Graph:
    graph = Graph()
    for text in (default_shapes(), *domain_shapes):
        graph += _turtle(text)
    for root in roots:
        graph.add((DEFAULT_SHAPE, SH.targetNode, URIRef(root)))
    return graph


def check_shapes(
    ntriples: str, *, roots: Sequence[str], domain_shapes: Sequence[str] = ()
) -> list[ShapeResult]:
    """Every result of the default shape (on `roots`) and the domain shapes on the candidate's
    triples. Warnings and infos are results too; only violations make a candidate fail."""
    data = Graph().parse(data=ntriples, format="nt")
    shapes = _shapes_graph(domain_shapes, roots)
    try:
        _, report, _ = validate(data, shacl_graph=shapes, allow_warnings=True, allow_infos=True)
    except ReportableRuntimeError as exc:
        raise InvalidInput(f"The domain shapes (shapes.ttl) cannot be used: {exc}") from None
    assert isinstance(report, Graph)
    return sorted(
        (_result(report, node) for node in report.subjects(RDF.type, SH.ValidationResult)),
        key=lambda r: (r.focus, r.path or "", r.message),
    )


def _result(report: Graph, node: object) -> ShapeResult:
    path = report.value(node, SH.resultPath)
    messages = sorted(str(m) for m in report.objects(node, SH.resultMessage))
    severity = report.value(node, SH.resultSeverity)
    return ShapeResult(
        focus=str(report.value(node, SH.focusNode)),
        path=str(path) if isinstance(path, URIRef) else None,
        message="; ".join(messages) or "does not conform",
        severity=_severity(severity),
    )


def _severity(term: object) -> Severity:
    if term == SH.Warning:
        return "Warning"
    if term == SH.Info:
        return "Info"
    return "Violation"
