"""Identifiers: CURIE and URI normalisation with `curies`, and the prefix priority of a merge.

The prefix map is Biolink's (the `biolink-model` package), so prefixes get their Biolink and
Translator spelling; Bioregistry's map (shipped in `prefixmaps`) adds the synonyms and URI
forms Biolink does not list (`EntrezGene:` -> `NCBIGene:`). Both are read from the installed
packages, once, on first use; nothing is fetched.

- A known prefix is matched in any case and through its synonyms: `ncbigene:7157`,
  `EntrezGene:7157` and `NCBIGene:7157` are `NCBIGene:7157`.
- A URI becomes a CURIE when the map knows its namespace
  (`http://identifiers.org/ncbigene/7157`, `https://identifiers.org/NCBIGene:7157`,
  `http://purl.obolibrary.org/obo/MONDO_0005148`); `curie_to_uri` goes the other way.
- Unknown prefixes keep their spelling; ids that are not CURIEs or known URIs are only trimmed.
- Which id leads a set of equivalent ids follows Biolink's per-category `id_prefixes` order.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from graphwright.core import biolink

if TYPE_CHECKING:
    import curies

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
# URI forms the resolver pattern above handles, or that no tool gives as a node id.
_REDUNDANT_URI = re.compile(
    r"https?://(?:www\.)?(?:identifiers\.org/[^/]*:|bioregistry\.io/|n2t\.net/|bio2rdf\.org/"
    r"|[^/]*/.*\?)"
)
_BIOREGISTRY_SYNONYM = re.compile(r"https?://bioregistry\.io/([A-Za-z][\w.-]*):")
_OBO_PURL = re.compile(r"https?://purl\.obolibrary\.org/obo/([A-Za-z][A-Za-z0-9]*)_(\S+)")
_PMID_TEXT = re.compile(
    r"\s*(?:pmid\s*:?\s*|(?:https?://)?(?:www\.)?pubmed\.ncbi\.nlm\.nih\.gov/)(\d+)/?\s*",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\s*(\d+)\s*")
_CASE_INSENSITIVE_LOCAL = frozenset({"doi"})


@cache
def converter() -> curies.Converter:
    """Biolink's prefix map, extended by Bioregistry's synonyms and URI prefixes."""
    import curies  # only URIs need it: CURIE prefixes are looked up in `_prefix_table`

    return curies.Converter(
        [
            curies.Record(
                prefix=prefix, uri_prefix=uri, prefix_synonyms=names, uri_prefix_synonyms=uris
            )
            for prefix, uri, names, uris in _prefix_map()
        ],
        strict=False,
    )


@cache
def _prefix_map() -> list[tuple[str, str, list[str], list[str]]]:
    """(prefix, URI prefix, prefix synonyms, URI prefix synonyms): Biolink's prefixes, each
    with the synonyms of the Bioregistry prefix that shares its namespace or name, then the
    Bioregistry prefixes Biolink does not have."""
    biolink_map = json.loads(
        (files("biolink_model") / "prefixmaps" / "biolink-model-prefix-map.json").read_text()
    )
    entries = {
        prefix: (prefix, uri, [], []) for prefix, uri in biolink_map.items() if isinstance(uri, str)
    }
    by_uri = {entry[1]: entry for entry in entries.values()}
    by_name = {prefix.lower(): entry for prefix, entry in entries.items()}
    for prefix, uri, aliases, uri_aliases in _bioregistry():
        # the Biolink prefix this record is: by its URI, its name, then its synonyms
        candidates = [
            by_uri.get(uri),
            by_name.get(prefix.lower()),
            *(by_uri.get(alias) for alias in uri_aliases),
            *(by_name.get(alias.lower()) for alias in aliases),
        ]
        entry = next((found for found in candidates if found is not None), None)
        if entry is None:
            entry = entries[prefix] = (prefix, uri, [], [])
            by_name[prefix.lower()] = entry
        for alias in (prefix, *aliases):
            if alias.lower() not in by_name:
                entry[2].append(alias)
                by_name[alias.lower()] = entry
        for alias in (uri, *uri_aliases):
            if alias not in by_uri:
                entry[3].append(alias)
                by_uri[alias] = entry
        if uri in entry[3] and entry[1] == uri:
            entry[3].remove(uri)
    return list(entries.values())


def _bioregistry() -> list[tuple[str, str, list[str], list[str]]]:
    """(prefix, URI prefix, prefix synonyms, URI prefix synonyms) from Bioregistry's map."""
    # found, not imported: importing prefixmaps loads far more than its data files
    spec = find_spec("prefixmaps")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the prefixmaps package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    text = (folder / "data" / "bioregistry.upper.csv").read_text()
    canonical: dict[str, tuple[str, list[str], list[str]]] = {}
    rows = list(csv.reader(text.splitlines()))[1:]
    for _, prefix, uri, status in rows:
        if status == "canonical":
            canonical[prefix] = (uri, [], [])
    by_uri = {uri: prefix for prefix, (uri, _, _) in canonical.items()}
    for _, prefix, uri, status in rows:
        if status != "prefix_alias" or prefix not in canonical:
            continue
        synonym = _BIOREGISTRY_SYNONYM.fullmatch(uri)
        if synonym:  # Bioregistry lists its prefix synonyms as resolver URIs
            canonical[prefix][1].append(synonym.group(1))
        elif not _REDUNDANT_URI.match(uri):
            canonical[prefix][2].append(uri)
        elif status == "namespace_alias" and uri in by_uri:
            canonical[by_uri[uri]][1].append(prefix)
    return [(prefix, uri, a, u) for prefix, (uri, a, u) in canonical.items()]


@cache
def _prefix_table() -> dict[str, str]:
    """Lower-cased prefix or synonym -> the canonical prefix."""
    table: dict[str, str] = {}
    for prefix, _, synonyms, _ in _prefix_map():
        for name in (prefix, *synonyms):
            table.setdefault(name.lower(), prefix)
    return table


_canonical_prefix: dict[str, str | None] = {}  # prefix as written -> canonical, or None


def canonical_prefix(prefix: str) -> str | None:
    """The canonical spelling of a prefix, matched in any case and through synonyms."""
    known = _canonical_prefix.get(prefix, False)
    if known is False:
        known = _canonical_prefix[prefix] = _prefix_table().get(prefix.strip().lower())
    return known  # type: ignore[return-value]


def normalize_curie(raw: str) -> str:
    """Trim `raw`, give a known CURIE prefix its canonical spelling and make a known URI a CURIE.

    `ncbigene:7157` and `EntrezGene:7157` become `NCBIGene:7157`; DOI local parts are
    lower-cased, since DOIs are case-insensitive. Unknown prefixes keep their spelling.
    """
    text = raw.strip()
    if text[:4].lower() == "http" and "://" in text[:8]:
        return uri_to_curie(text) or text
    prefix, sep, local = text.partition(":")
    if not sep:
        return text
    canonical = canonical_prefix(prefix)
    if canonical is None:
        return text
    local = local.strip()
    if case_insensitive_local(canonical):
        local = local.lower()
    return f"{canonical}:{local}"


def case_insensitive_local(canonical: str) -> bool:
    """Whether the local parts of this (canonical) prefix are compared lower-cased."""
    return canonical in _CASE_INSENSITIVE_LOCAL


def uri_to_curie(uri: str) -> str | None:
    """The CURIE of a URI in a known namespace (identifiers.org, OBO PURLs, ...), or None."""
    resolved = _RESOLVERS.fullmatch(uri)
    if resolved:
        curie = resolved.group(1)
        return normalize_curie(curie) if canonical_prefix(curie.partition(":")[0]) else None
    legacy = _legacy_identifiers_org(uri)
    if legacy:
        return legacy
    compressed = converter().compress(uri) or converter().compress(_other_scheme(uri))
    if compressed:
        return normalize_curie(compressed)
    obo = _OBO_PURL.fullmatch(uri)
    if obo and canonical_prefix(obo.group(1)):
        return normalize_curie(f"{obo.group(1)}:{obo.group(2)}")
    return None


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
    """The URI of a CURIE with a known prefix (Biolink's namespace for it), or None."""
    return converter().expand(normalize_curie(curie))


def _other_scheme(uri: str) -> str:
    if uri.startswith("https://"):
        return "http://" + uri[len("https://") :]
    return "https://" + uri.removeprefix("http://")


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
