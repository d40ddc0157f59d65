"""Identifiers: CURIE and URI normalisation, and the prefix priority of a merge.

The prefix map (`core/prefix_map.py`) has one preferred prefix per namespace, Biolink's where
Biolink has one and Bioregistry's otherwise, with every prefix synonym and URI prefix of
Bioregistry's records; it is read from the installed packages (built once, then cached on
disk); nothing is fetched.

- A known prefix is matched in any case and through its synonyms: `ncbigene:7157`,
  `GeneID:7157` and `NCBIGene:7157` are `NCBIGene:7157`; `WormBase:` is `WB:`.
- A local id loses what Bioregistry calls redundant: its banana or its prefix written again
  (`GO:GO:0032571` is `GO:0032571`, `obi:OBI_0400109` is `OBI:0400109`).
- A URI becomes a CURIE when the map knows its namespace: any URI prefix of the namespace
  (provider, RDF, OBO PURL, identifiers.org in both forms, N2T, bioregistry.io);
  `curie_to_uri` goes the other way.
- Unknown prefixes keep their spelling; ids that are not CURIEs or known URIs are only trimmed.
- Which id leads a set of equivalent ids follows Biolink's per-category `id_prefixes` order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from graphwright.core import biolink
from graphwright.core.prefix_map import Namespace, namespaces

# CURIE resolvers whose URIs end in the CURIE itself.
_RESOLVERS = re.compile(
    r"https?://(?:www\.)?(?:identifiers\.org|bioregistry\.io|n2t\.net)/([^/:]+:[^/]+)/?",
    re.IGNORECASE,
)
# identifiers.org's older form, namespace then id; some ids repeat their prefix
# (`/mondo/MONDO:0005148`), as the namespace's own ids do.
_LEGACY_IDENTIFIERS_ORG = re.compile(
    r"https?://(?:www\.)?identifiers\.org/([^/:]+)/([^/]+)/?", re.IGNORECASE
)
_PMID_TEXT = re.compile(
    r"\s*(?:pmid\s*:?\s*|(?:https?://)?(?:www\.)?pubmed\.ncbi\.nlm\.nih\.gov/)(\d+)/?\s*",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\s*(\d+)\s*")
_CASE_INSENSITIVE_LOCAL = frozenset({"doi"})


@cache
def _uri_table() -> tuple[dict[str, str], tuple[int, ...]]:
    """Every namespace's URI prefixes -> its preferred prefix, and their lengths, longest first.

    A URI is compressed by trying its first n characters for each length: a few dozen dict
    lookups. (A `curies.Converter` over these 25,000 URI prefixes takes 0.4 s of CPU to build
    in every process, for the same answers.)"""
    table: dict[str, str] = {}
    for space in namespaces():
        for uri in (space.uri_prefix, *space.uri_prefixes):
            if uri:
                table.setdefault(uri, space.prefix)
    return table, tuple(sorted({len(uri) for uri in table}, reverse=True))


def _compress(uri: str) -> str | None:
    """`prefix:local` by the longest known URI prefix of `uri`, or None."""
    table, lengths = _uri_table()
    for length in lengths:
        if length < len(uri):
            prefix = table.get(uri[:length])
            if prefix is not None:
                return f"{prefix}:{uri[length:]}"
    return None


@cache
def _expansions() -> dict[str, str]:
    """Preferred prefix -> the namespace's main URI prefix."""
    return {
        space.prefix: uri
        for space in namespaces()
        if (uri := space.uri_prefix or next(iter(space.uri_prefixes), None))
    }


@cache
def _prefix_table() -> dict[str, Namespace]:
    """Lower-cased prefix or synonym -> its namespace."""
    table: dict[str, Namespace] = {}
    for space in namespaces():
        for name in (space.prefix, *space.synonyms):
            table.setdefault(name.casefold(), space)
    return table


_namespace_of: dict[str, Namespace | None] = {}  # prefix as written -> namespace, or None


def _namespace(prefix: str) -> Namespace | None:
    known = _namespace_of.get(prefix, False)
    if known is False:
        known = _namespace_of[prefix] = _prefix_table().get(prefix.strip().casefold())
    return known  # type: ignore[return-value]


def canonical_prefix(prefix: str) -> str | None:
    """The preferred spelling of a prefix, matched in any case and through synonyms."""
    space = _namespace(prefix)
    return None if space is None else space.prefix


def redundant_starts(canonical: str) -> tuple[str, ...]:
    """What a local id of this (preferred) prefix may start with redundantly, lower-cased."""
    space = _namespace(canonical)
    return () if space is None else space.bananas


def normalize_curie(raw: str) -> str:
    """Trim `raw`, give a known CURIE prefix its preferred spelling and make a known URI a CURIE.

    `ncbigene:7157` and `GeneID:7157` become `NCBIGene:7157`, `GO:GO:0032571` becomes
    `GO:0032571`; DOI local parts are lower-cased, since DOIs are case-insensitive. Unknown
    prefixes keep their spelling.
    """
    text = raw.strip()
    if text[:4].lower() == "http" and "://" in text[:8]:
        return uri_to_curie(text) or text
    prefix, sep, local = text.partition(":")
    if not sep:
        return text
    space = _namespace(prefix)
    if space is None:
        return text
    local = space.strip_banana(local.strip())
    if case_insensitive_local(space.prefix):
        local = local.lower()
    return f"{space.prefix}:{local}"


def case_insensitive_local(canonical: str) -> bool:
    """Whether the local parts of this (canonical) prefix are compared lower-cased."""
    return canonical in _CASE_INSENSITIVE_LOCAL


def uri_to_curie(uri: str) -> str | None:
    """The CURIE of a URI in a known namespace (identifiers.org, OBO PURLs, ...), or None.

    The namespaces' own URI prefixes come first (an identifiers.org URI names a namespace by
    its identifiers.org prefix, which may be another namespace's synonym); a resolver URI
    that none of them has is read as the CURIE it ends in."""
    compressed = _compress(uri) or _compress(_other_scheme(uri))
    if compressed:
        return normalize_curie(compressed)
    resolved = _RESOLVERS.fullmatch(uri)
    if resolved:
        curie = resolved.group(1)
        return normalize_curie(curie) if canonical_prefix(curie.partition(":")[0]) else None
    return _legacy_identifiers_org(uri)


def _legacy_identifiers_org(uri: str) -> str | None:
    match = _LEGACY_IDENTIFIERS_ORG.fullmatch(uri)
    prefix = canonical_prefix(match.group(1)) if match else None
    if match is None or prefix is None:
        return None
    local = match.group(2)
    embedded, sep, rest = local.partition(":")
    if sep and canonical_prefix(embedded) == prefix:
        local = rest
    return normalize_curie(f"{prefix}:{local}")


def curie_to_uri(curie: str) -> str | None:
    """The URI of a CURIE with a known prefix (its namespace's main URI prefix), or None."""
    prefix, sep, local = normalize_curie(curie).partition(":")
    uri = _expansions().get(prefix) if sep else None
    return None if uri is None else uri + local


def _other_scheme(uri: str) -> str:
    if uri.startswith("https://"):
        return "http://" + uri[len("https://") :]
    return "https://" + uri.removeprefix("http://")


def load() -> None:
    """Read the prefix map and build the tables from it now, not in the first request that
    needs them (some 40 ms of CPU, holding the interpreter): `graphwright serve` does at start."""
    _uri_table()
    _prefix_table()
    _expansions()
    _ranks()


# -- which id leads ----------------------------------------------------------------------------


@cache
def prefix_priority() -> tuple[str, ...]:
    """Prefixes in the order they lead a set of equivalent ids: by their place in the Biolink
    `id_prefixes` of the main categories (genes, proteins, chemicals, drugs, diseases,
    phenotypes, processes, ...), the broad vocabularies (UMLS, MESH, NCIT, ...) last."""
    return biolink.prefix_order()


@cache
def _ranks() -> dict[str, int]:
    return {prefix: rank for rank, prefix in enumerate(prefix_priority())}


def prefix_rank(curie: str) -> tuple[int, str]:
    """Sort key of an id under `prefix_priority()`: lower sorts first and leads. Prefixes not
    listed come after all listed ones, then ids that are not CURIEs; ties by the full id."""
    ranks = _ranks()
    prefix, sep, _ = curie.partition(":")
    return (ranks.get(prefix, len(ranks)) if sep else len(ranks) + 1, curie)


def pick_leader(curies_: Iterable[str], category: str | None = None) -> str:
    """The id that represents a set of equivalent (normalised) ids; with a `category`, its own
    Biolink `id_prefixes` order comes first (`Gene`: NCBIGene, ENSEMBL, HGNC, ...)."""
    if category is None:
        return min(curies_, key=prefix_rank)
    own = {prefix: rank for rank, prefix in enumerate(biolink.id_prefixes(category))}

    def key(curie: str) -> tuple[int, tuple[int, str]]:
        return own.get(curie.partition(":")[0], len(own)), prefix_rank(curie)

    return min(curies_, key=key)


def normalize_pmid(value: object, *, bare_digits: bool = False) -> str | None:
    """`PMID:<digits>` for a PMID written as `PMID:1`, `pmid: 1` or a PubMed URL, else None.

    With `bare_digits` (the value sits in a field that holds PMIDs), `"1"` and `1` count too.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"PMID:{value}" if bare_digits and value > 0 else None
    if not isinstance(value, str):
        return None
    match = _PMID_TEXT.fullmatch(value) or (_DIGITS.fullmatch(value) if bare_digits else None)
    return f"PMID:{int(match.group(1))}" if match else None
