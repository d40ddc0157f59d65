"""JSON-LD in, knowledge assets out: expansion with pyld, one asset per subject, as a DKG node does.

Contexts resolve only from the copies shipped in `contexts/` (schema.org, Biolink): a remote
`@context` URL fails at once with an error that names it, instead of hanging without a network.
Blank nodes get `uuid:` IRIs, as dkg.py gives them before publishing, so that every triple of an
asset can be found again by its subject.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson
import pyoxigraph as ox
from pyld import jsonld

from graphwright.core.formats.rdf import write_jsonld
from graphwright.core.nul import nul_path, nul_refusal
from graphwright.errors import InvalidInput, NotFound

Triple = tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | ox.Literal]

_CONTEXT_FILES = {
    "schema.org.jsonld": (
        "http://schema.org",
        "https://schema.org",
        "http://schema.org/",
        "https://schema.org/",
        "https://schema.org/docs/jsonldcontext.json",
        "http://schema.org/docs/jsonldcontext.json",
    ),
    "biolink.jsonld": (
        "https://w3id.org/biolink/biolink-model/context.jsonld",
        "https://biolink.github.io/biolink-model/context.jsonld",
        "https://raw.githubusercontent.com/biolink/biolink-model/master/context.jsonld",
    ),
}
# dkg.py names a blank node `uuid:<uuid>` before publishing; so does the knowledge base.
SKOLEM_PREFIX = "uuid:"
MAX_BLANK_NODES = 100
KNOWN_CONTEXTS: dict[str, str] = {
    url: filename for filename, urls in _CONTEXT_FILES.items() for url in urls
}


@dataclass(frozen=True)
class AssetDraft:
    """One knowledge asset before publishing: a subject and its triples."""

    subject: str
    public: list[Triple]
    private: list[Triple]

    @property
    def triple_count(self) -> int:
        return len(self.public) + len(self.private)


@cache
def _context_document(filename: str) -> dict[str, Any]:
    text = resources.files("graphwright.knowledge.contexts").joinpath(filename).read_bytes()
    return orjson.loads(text)


def load_document(url: str, _options: dict[str, Any] | None = None) -> dict[str, Any]:
    filename = KNOWN_CONTEXTS.get(url.rstrip("#"))
    if filename is None:
        raise InvalidInput(
            f"The JSON-LD context '{url}' cannot be loaded: graphwright resolves only the "
            f"contexts it ships ({', '.join(sorted(_CONTEXT_FILES))}); inline the context "
            "as an object instead of a URL"
        )
    return {"contextUrl": None, "documentUrl": url, "document": _context_document(filename)}


def split_content(content: Any) -> tuple[Any, Any]:
    """The public and private parts of a publish: one object, a list, or dkg.py's
    `{"public": ..., "private": ...}`."""
    if isinstance(content, dict) and content.keys() and content.keys() <= {"public", "private"}:
        return content.get("public"), content.get("private")
    return content, None


def to_triples(document: Any, *, part: str = "public") -> list[Triple]:
    """The triples of a JSON-LD document; InvalidInput names what is wrong."""
    if document is None:
        return []
    nquads = _nquads(document, part)
    try:
        quads = list(ox.parse(nquads.encode(), ox.RdfFormat.N_QUADS))
    except SyntaxError as exc:  # pyld wrote a term RDF does not allow (an IRI, a language tag)
        lines = nquads.splitlines()
        line = lines[exc.lineno - 1] if exc.lineno and exc.lineno <= len(lines) else ""
        raise InvalidInput(
            f"The {part} JSON-LD holds a value RDF does not allow ({exc.msg}) in the triple "
            f"{line[:300]}: check its @id IRIs and @language tags"
        ) from None
    if any(not isinstance(quad.graph_name, ox.DefaultGraph) for quad in quads):
        raise InvalidInput(
            f"The {part} JSON-LD names a graph (@graph with an @id): a knowledge asset is "
            "published into its own named graph, so give the triples without one"
        )
    return _skolemize(quad.triple for quad in quads)


def _nquads(document: Any, part: str) -> str:
    if not isinstance(document, dict | list):
        raise InvalidInput(f"The {part} content must be a JSON-LD object or a list of objects")
    try:
        return str(
            jsonld.to_rdf(
                document, {"format": "application/n-quads", "documentLoader": load_document}
            )
        )
    except jsonld.JsonLdError as exc:
        raise InvalidInput(f"The {part} JSON-LD does not expand: {_cause(exc)}") from None
    except RecursionError:
        raise InvalidInput(f"The {part} JSON-LD is nested too deeply to expand") from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        # pyld parses untrusted input and fails in other ways on some malformed documents.
        raise InvalidInput(f"The {part} JSON-LD does not expand: {exc}") from None


def canonical_hash(document: Any) -> str:
    """SHA-256 of the document's RDF in RDFC-1.0 (URDNA2015) canonical N-Quads: the same for
    two documents that say the same thing, however their JSON is written. For dkg.py's
    `{"public", "private"}` content, the hash of the two parts' hashes."""
    public, private = split_content(document)
    digest = canonical_nquads_hash(_nquads(public, "public"))
    if private is None:
        return digest
    both = digest + canonical_nquads_hash(_nquads(private, "private"))
    return hashlib.sha256(both.encode()).hexdigest()


def published_hash(lines: list[str]) -> str:
    """`canonical_hash` of published triples (N-Triples lines), the `uuid:` names the knowledge
    base gave blank nodes when it published them (as dkg.py does) read back as blank nodes."""
    triples = ox.parse("\n".join(lines).encode(), ox.RdfFormat.N_TRIPLES)
    blanks: dict[str, ox.BlankNode] = {}

    def blank(term: Any) -> Any:
        if isinstance(term, ox.NamedNode) and term.value.startswith(SKOLEM_PREFIX):
            return blanks.setdefault(term.value, ox.BlankNode())
        return term

    quads = [ox.Quad(blank(t.subject), t.predicate, blank(t.object)) for t in triples]
    return canonical_nquads_hash(ox.serialize(quads, format=ox.RdfFormat.N_QUADS).decode())


def canonical_nquads_hash(nquads: str) -> str:
    """SHA-256 of RDFC-1.0 canonical N-Quads. Canonical labelling can take exponential time on
    crafted graphs of blank nodes, so a document with more than MAX_BLANK_NODES is refused."""
    blanks = {
        term.value
        for quad in ox.parse(nquads.encode(), ox.RdfFormat.N_QUADS)
        for term in (quad.subject, quad.object)
        if isinstance(term, ox.BlankNode)
    }
    if len(blanks) > MAX_BLANK_NODES:
        raise InvalidInput(
            f"The JSON-LD has {len(blanks)} nested objects without an @id (blank nodes); at "
            f"most {MAX_BLANK_NODES} can be compared: give the others an @id"
        )
    options = {
        "algorithm": "URDNA2015",
        "inputFormat": "application/n-quads",
        "format": "application/n-quads",
    }
    return hashlib.sha256(jsonld.normalize(nquads, options).encode()).hexdigest()


def _cause(exc: BaseException) -> str:
    """The innermost message of pyld's chained errors: the one that says what is wrong."""
    while True:
        details = getattr(exc, "details", None) or {}
        inner = getattr(exc, "cause", None) or details.get("cause") or exc.__cause__
        if isinstance(inner, InvalidInput):
            return str(inner)
        if inner is None:
            message = getattr(exc, "message", None) or str(exc)
            return str(message).splitlines()[0]
        exc = inner


def _skolemize(triples: Any) -> list[Triple]:
    names: dict[str, ox.NamedNode] = {}

    def named(term: Any) -> Any:
        if isinstance(term, ox.BlankNode):
            return names.setdefault(term.value, ox.NamedNode(f"{SKOLEM_PREFIX}{uuid.uuid4()}"))
        return term

    return [(named(t.subject), t.predicate, named(t.object)) for t in triples]


def draft_assets(content: Any) -> list[AssetDraft]:
    """The knowledge assets of a publish, one per subject, sorted by subject as a DKG node
    sorts them. Refuses content that yields no public triple."""
    public_doc, private_doc = split_content(content)
    public = to_triples(public_doc, part="public")
    private = to_triples(private_doc, part="private")
    if not public:
        raise InvalidInput(
            "The JSON-LD yields no triple: give each object an @context (or full IRIs as "
            "keys) and at least one property besides @id"
        )
    by_subject: dict[str, tuple[list[Triple], list[Triple]]] = {}
    for triples, slot in ((public, 0), (private, 1)):
        for triple in _unique(triples):
            by_subject.setdefault(triple[0].value, ([], []))[slot].append(triple)
    return [
        AssetDraft(subject, pub, priv)
        for subject, (pub, priv) in sorted(by_subject.items())
        if pub or priv
    ]


def _unique(triples: list[Triple]) -> list[Triple]:
    return list(dict.fromkeys(triples))


def checked_drafts(content: Any) -> list[AssetDraft]:
    """The assets of `content`, once it is known to store the same on every database."""
    try:
        orjson.dumps(content)
    except TypeError as exc:
        raise InvalidInput(f"The JSON-LD cannot be stored: {exc}") from None
    where = nul_path(content)
    if where is not None:
        raise InvalidInput(f"The JSON-LD: {nul_refusal(where)}")
    return draft_assets(content)


def graph_document(
    graph: dict[str, Any], node_ids: list[str] | None, *, name: str
) -> dict[str, Any]:
    """A knowledge graph (or the chosen nodes and the links between them) as JSON-LD: nodes as
    subjects, links as properties, and each link also as a statement with its evidence."""
    if node_ids is not None:
        graph = select_nodes(graph, node_ids)
    if not graph["nodes"]:
        raise InvalidInput(f"The graph of {name} has no nodes")
    return orjson.loads(write_jsonld(graph))


def select_nodes(graph: dict[str, Any], node_ids: list[str]) -> dict[str, Any]:
    """The chosen nodes and the links between them; NotFound names ids the graph lacks."""
    wanted = set(node_ids)
    nodes = [node for node in graph["nodes"] if node["id"] in wanted]
    if missing := wanted - {node["id"] for node in nodes}:
        raise NotFound(f"The graph has no node {', '.join(sorted(missing)[:10])}")
    links = [
        link for link in graph["links"] if link["source"] in wanted and link["target"] in wanted
    ]
    return {"nodes": nodes, "links": links}


def default_title(drafts: list[AssetDraft]) -> str:
    names = [
        str(obj.value)
        for draft in drafts
        for _, predicate, obj in draft.public
        if predicate.value.endswith(("/name", "#label"))
    ]
    head = names[0] if names else drafts[0].subject
    more = f" and {len(drafts) - 1} more" if len(drafts) > 1 else ""
    return f"{head}{more}"
