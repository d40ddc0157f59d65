"""The prefix map: one preferred prefix per namespace, with every synonym and URI prefix.

Built from Bioregistry's full records (the `bioregistry` package ships its registry) and
Biolink's prefix map (the `biolink-model` package); nothing is fetched. A namespace is a
Bioregistry record, with the records Bioregistry marks as duplicates of it (`has_canonical`:
`orphanet.ordo` is `orphanet`). Its preferred prefix is Biolink's when Biolink has one (the one
Biolink's `id_prefixes` list first when it has several: `WB` over `WormBase`, `RXCUI` over
`RXNORM`), else Bioregistry's preferred prefix. Every prefix synonym and every URI prefix of the
record counts (provider, RDF, OBO PURL, identifiers.org old and new, N2T, bioregistry.io), plus
Biolink's. A URI prefix that two namespaces claim is kept only by the one whose own URI it is
(a namespace's main URI over another's synonym; a record over its parts, `kegg` over
`kegg.drug`), otherwise by neither.

Building takes seconds (importing bioregistry alone takes one), so the map is built once per
version of the two packages and kept as JSON in the user cache folder; later processes read it
in a few milliseconds.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from graphwright.core import biolink

_FORMAT = 3  # bump when what the map holds changes
# A resolver's root is no namespace's URI prefix (some records list one): a URI under it names
# its namespace itself (`https://identifiers.org/NCBIGene:7157`).
_RESOLVER_ROOTS = frozenset(
    f"{scheme}://{host}/"
    for scheme in ("http", "https")
    for host in (
        "identifiers.org",
        "www.identifiers.org",
        "n2t.net",
        "bioregistry.io",
        "bio2rdf.org",
    )
)


@dataclass(frozen=True)
class Namespace:
    """One namespace: its preferred prefix, main URI prefix, every synonym and URI prefix, and
    the banana of its local ids (`GO` in `GO:0032571`, written again as `GO:GO:0032571`)."""

    prefix: str
    uri_prefix: str | None
    synonyms: tuple[str, ...]
    uri_prefixes: tuple[str, ...]
    bananas: tuple[str, ...]  # lower-cased texts a local id may start with redundantly

    def strip_banana(self, local: str) -> str:
        """`local` without a redundant banana or prefix (Bioregistry's rule for local ids)."""
        folded = local.casefold()
        for banana in self.bananas:
            if folded.startswith(banana) and len(local) > len(banana):
                return local[len(banana) :]
        return local


@cache
def namespaces() -> tuple[Namespace, ...]:
    """Every namespace, read from the cache or built (and cached) on first use."""
    path = _cache_path()
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError):
        records = _build()
        _write(path, records)
    return tuple(Namespace(r[0], r[1], tuple(r[2]), tuple(r[3]), tuple(r[4])) for r in records)


def _cache_path() -> Path:
    folder = os.environ.get("GRAPHWRIGHT_CACHE_DIR") or user_cache_dir("graphwright")
    versions = f"{version('bioregistry')}-{version('biolink-model')}-{_FORMAT}"
    return Path(folder) / f"prefix-map-{versions}.json"


def _write(path: Path, records: list[list[Any]]) -> None:
    """Write the map whole or not at all (another process may be writing it too)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as handle:
            json.dump(records, handle, separators=(",", ":"))
        os.replace(handle.name, path)
    except OSError:
        pass  # a read-only cache folder: the map is built again next time


def build() -> list[Namespace]:
    """The map built afresh from the installed packages (what the cache holds)."""
    return [Namespace(r[0], r[1], tuple(r[2]), tuple(r[3]), tuple(r[4])) for r in _build()]


# -- building ----------------------------------------------------------------------------------


def _build() -> list[list[Any]]:
    # imported here, not above: importing it takes a second, and only building needs it
    import bioregistry

    registry = bioregistry.read_registry()
    home = {key: _canonical_key(bioregistry, registry, key) for key in registry}
    biolink_uris = _biolink_map()
    uri_homes: dict[str, set[str]] = {}
    for key, resource in registry.items():
        for uri in resource.get_uri_prefixes():
            uri_homes.setdefault(uri, set()).add(home[key])
    chosen, own = _biolink_prefixes(bioregistry, biolink_uris, home, uri_homes)
    entries: dict[str, dict[str, Any]] = {}
    for key in sorted(registry):
        if home[key] != key:
            continue
        resource = registry[key]
        preferred = resource.get_preferred_prefix()
        if preferred is None or bioregistry.normalize_prefix(preferred) != key:
            preferred = key  # Bioregistry reads that spelling as another record's
        prefix = chosen.get(key, [preferred])[0]
        entries[key] = {
            "key": key,
            "prefix": prefix,
            "uri": None,
            "names": [],
            "uris": [],
            "bananas": [],
            "parts": set(),
        }
    for key in sorted(registry):
        entry, resource = entries[home[key]], registry[key]
        entry["names"] += [
            key,
            resource.get_preferred_prefix() or key,
            *sorted(resource.get_synonyms()),
        ]
        entry["uris"] += sorted(resource.get_uri_prefixes())
        entry["bananas"] += _bananas(resource)
        if resource.part_of in home:
            entries[home[resource.part_of]]["parts"].add(home[key])
        if home[key] == key:
            entry["uri"] = resource.get_uri_prefix()
    for key, prefixes in chosen.items():
        entry = entries[key]
        entry["names"] += prefixes
        uris = [biolink_uris[p] for p in prefixes]
        entry["uris"] += uris
        entry["uri"] = _main_uri(uris[0], entry)
    return _resolve_claims([*entries.values(), *own])


def _canonical_key(bioregistry: Any, registry: dict[str, Any], key: str) -> str:
    """The record a record duplicates (`has_canonical`, followed), or the record itself."""
    seen = {key}
    while registry[key].has_canonical:
        canonical = bioregistry.normalize_prefix(registry[key].has_canonical)
        if canonical is None or canonical in seen:
            break
        key = canonical
        seen.add(key)
    return key


def _biolink_map() -> dict[str, str]:
    text = (files("biolink_model") / "prefixmaps" / "biolink-model-prefix-map.json").read_text()
    return {prefix: uri for prefix, uri in json.loads(text).items() if isinstance(uri, str)}


def _biolink_prefixes(
    bioregistry: Any,
    biolink_uris: dict[str, str],
    home: dict[str, str],
    uri_homes: dict[str, set[str]],
) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    """(namespace key -> the Biolink prefixes of that namespace, the preferred first; the
    Biolink prefixes of no Bioregistry namespace, as namespaces of their own).

    A Biolink prefix is a namespace's when Bioregistry reads it as that namespace's prefix, or
    else when its URI prefix is one of that namespace's and no other's (`qud` is `qudt`). The
    preferred one is the one Biolink's `id_prefixes` list first, then Bioregistry's preferred
    spelling, then the map's order."""
    order = {prefix: rank for rank, prefix in enumerate(biolink.prefix_order())}
    found: dict[str, list[str]] = {}
    own = []
    for prefix, uri in biolink_uris.items():
        key = bioregistry.normalize_prefix(prefix)
        homes = uri_homes.get(uri, set())
        if key is not None:
            found.setdefault(home[key], []).append(prefix)
        elif len(homes) == 1:
            found.setdefault(next(iter(homes)), []).append(prefix)
        else:  # a vocabulary of Translator's own
            own.append({"key": None, "prefix": prefix, "uri": uri, "names": [prefix],
                        "uris": [uri], "bananas": [], "parts": set()})  # fmt: skip
    for key, prefixes in found.items():
        preferred = (bioregistry.get_preferred_prefix(key) or key).casefold()
        prefixes.sort(key=lambda p: (order.get(p, len(order)), p.casefold() != preferred))
    return found, own


def _main_uri(biolink_uri: str, entry: dict[str, Any]) -> str:
    """Biolink's URI prefix, with the banana when the namespace's ids carry it in URIs
    (Biolink's `ORDO` is `http://www.orpha.net/ORDO/`, its ids `Orphanet_558`)."""
    for banana in entry["bananas"]:
        wanted = (biolink_uri + banana).casefold()
        for uri in entry["uris"]:
            if uri.casefold() == wanted:
                return uri
    return biolink_uri


def _bananas(resource: Any) -> list[str]:
    """Bioregistry's redundant starts of a local id: banana or prefix, then its peel or `_`."""
    banana = resource.get_banana()
    peels = dict.fromkeys([resource.get_banana_peel(), "_"])
    found = [f"{banana}{peel}".casefold() for peel in peels if banana]
    found += [f"{resource.prefix}{peel}".casefold() for peel in peels]
    return list(dict.fromkeys(found))


def _resolve_claims(entries: list[dict[str, Any]]) -> list[list[Any]]:
    """Give each prefix synonym and URI prefix to one namespace; drop the ambiguous ones."""
    name_owner: dict[str, int] = {}
    for rank in (0, 1, 2):  # preferred prefixes, Bioregistry's keys, then synonyms in order
        for number, entry in enumerate(entries):
            names = [[entry["prefix"]], [entry["key"] or entry["prefix"]], entry["names"]][rank]
            for name in names:
                name_owner.setdefault(name.casefold(), number)
    uri_claims: dict[str, list[tuple[int, int]]] = {}
    for number, entry in enumerate(entries):
        for uri in dict.fromkeys([entry["uri"], *entry["uris"]]):
            if uri and uri not in _RESOLVER_ROOTS:
                uri_claims.setdefault(uri, []).append((0 if uri == entry["uri"] else 1, number))
    index_of = {entry["key"]: number for number, entry in enumerate(entries) if entry["key"]}
    parts = [{index_of[key] for key in entry["parts"]} for entry in entries]
    uri_owner: dict[str, int] = {}
    for uri, claims in uri_claims.items():
        owner = _owner(claims, parts)
        if owner is not None:
            uri_owner[uri] = owner
    records = []
    for number, entry in enumerate(entries):
        names = [n for n in dict.fromkeys(entry["names"]) if name_owner[n.casefold()] == number]
        uris = [u for u in dict.fromkeys(entry["uris"]) if uri_owner.get(u) == number]
        main = entry["uri"] if uri_owner.get(entry["uri"]) == number else None
        records.append(
            [
                entry["prefix"],
                main,
                [n for n in names if n != entry["prefix"]],
                [u for u in uris if u != main],
                entry["bananas"],
            ]
        )
    return records


def _owner(claims: list[tuple[int, int]], parts: list[set[int]]) -> int | None:
    """The namespace a URI prefix belongs to: its only claimant; the one whose main URI it is;
    the record whose parts the others are; otherwise none."""
    owners = {number for _, number in claims}
    if len(owners) == 1:
        return owners.pop()
    main = {number for kind, number in claims if kind == 0}
    if len(main) == 1:
        return main.pop()
    parents = [number for number in owners if owners - {number} <= parts[number]]
    return parents[0] if len(parents) == 1 else None
