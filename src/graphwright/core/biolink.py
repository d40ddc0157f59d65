"""The Biolink model as graphwright uses it, read from the YAML the `biolink-model` package ships.

Nothing is fetched: the schema is loaded once, on first use, from the installed package. It gives
- the kind of each slot as a KGX column (multivalued, integer, float, boolean or text);
- the class hierarchy, to tell whether two categories can name the same entity;
- each class's `id_prefixes`, which order the ids of an entity and infer a category from a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from typing import Literal

import yaml

SlotKind = Literal["multivalued", "integer", "float", "boolean", "text"]
BIOLINK = "biolink:"
NAMED_THING = "biolink:NamedThing"
_NUMERIC = {"integer": "integer", "float": "float", "double": "float", "boolean": "boolean"}
# Kinds inside which Translator conflates classes (genes with their products, chemicals with
# drugs): two categories under the same one of these may name one entity.
_CONFLATED = ("gene or gene product", "chemical entity")
_WORD = re.compile(r"[\s_]+")
_TYPE_WORD = re.compile(r"[\s_-]+")
# The classes most ids belong to, in the order their prefixes rank when ids of an entity are
# ordered; a prefix's category is the first of these that lists it earliest.
MAIN_CLASSES = (
    "gene", "protein", "chemical entity", "drug", "disease", "phenotypic feature",
    "biological process", "molecular activity", "pathway", "cellular component",
    "anatomical entity", "cell", "organism taxon", "publication",
)  # fmt: skip
# A prefix among the first few of several main classes is inferred as their common class.
_NEAR_TOP = 6
_GENERIC = frozenset({"entity", "named thing", "biological entity", "thing with taxon"})
# Cross-domain vocabularies: listed by many classes, they never decide a category or lead.
BROAD_PREFIXES = frozenset({"UMLS", "MESH", "NCIT", "SNOMEDCT", "MEDDRA", "ICD10"})


@dataclass(frozen=True)
class _Model:
    slot_kinds: dict[str, SlotKind]
    classes: dict[str, str]  # biolink:PascalCase -> class name as in the YAML
    ancestors: dict[str, frozenset[str]]  # class name -> itself and every is_a/mixin ancestor
    parents: dict[str, frozenset[str]]  # class name -> itself and its is_a ancestors
    id_prefixes: dict[str, tuple[str, ...]]  # class name -> its id_prefixes, best first
    prefix_category: dict[str, str]  # prefix -> biolink:Class inferred from it


def class_curie(name: str) -> str:
    return BIOLINK + "".join(word[:1].upper() + word[1:] for word in _WORD.split(name) if word)


@cache
def _model() -> _Model:
    text = (files("biolink_model") / "schema" / "biolink_model.yaml").read_text()
    schema = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    types = schema["types"]
    kinds: dict[str, SlotKind] = {}
    for name, slot in schema["slots"].items():
        kinds[name.replace(" ", "_")] = _slot_kind(slot or {}, types)
    classes = schema["classes"]
    ancestors = {name: _ancestors(name, classes, with_mixins=True) for name in classes}
    parents = {name: _ancestors(name, classes, with_mixins=False) for name in classes}
    id_prefixes = {
        name: tuple(spec.get("id_prefixes") or ()) for name, spec in classes.items() if spec
    }
    return _Model(
        slot_kinds=kinds,
        classes={class_curie(name): name for name in classes},
        ancestors=ancestors,
        parents=parents,
        id_prefixes=id_prefixes,
        prefix_category=_prefix_categories(classes, parents),
    )


def _slot_kind(slot: dict, types: dict) -> SlotKind:
    if slot.get("multivalued"):
        return "multivalued"
    range_name = slot.get("range")
    while range_name in types and types[range_name].get("typeof"):
        range_name = types[range_name]["typeof"]
    return _NUMERIC.get(range_name, "text")  # type: ignore[return-value]


def _ancestors(name: str, classes: dict, *, with_mixins: bool) -> frozenset[str]:
    found: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        if current in found or current not in classes:
            continue
        found.add(current)
        spec = classes[current] or {}
        if spec.get("is_a"):
            stack.append(spec["is_a"])
        if with_mixins:
            stack.extend(spec.get("mixins") or ())
    return frozenset(found)


def _prefix_categories(classes: dict, parents: dict[str, frozenset[str]]) -> dict[str, str]:
    """Prefix -> the class that lists it earliest in its id_prefixes, main classes first, the
    most general on a tie: CHEBI -> ChemicalEntity, HGNC -> Gene, MONDO -> Disease; a prefix
    near the top of several main classes gets their closest common class (EFO ->
    DiseaseOrPhenotypicFeature, KEGG -> BiologicalProcess)."""
    best: dict[str, tuple[bool, int, int, int, int, str]] = {}
    for order, (name, spec) in enumerate(classes.items()):
        if not spec or spec.get("mixin"):
            continue
        main = MAIN_CLASSES.index(name) if name in MAIN_CLASSES else len(MAIN_CLASSES)
        for position, prefix in enumerate(spec.get("id_prefixes") or ()):
            if prefix in BROAD_PREFIXES:
                continue
            rank = (main == len(MAIN_CLASSES), position, main, len(parents[name]), order, name)
            if prefix not in best or rank < best[prefix]:
                best[prefix] = rank
    inferred = {prefix: class_curie(rank[-1]) for prefix, rank in best.items()}
    near: dict[str, list[str]] = {}  # prefix -> main classes listing it among their first few
    for name in MAIN_CLASSES:
        for prefix in (classes.get(name) or {}).get("id_prefixes", ())[:_NEAR_TOP]:
            near.setdefault(prefix, []).append(name)
    for prefix, names in near.items():
        common = frozenset.intersection(*(parents[name] for name in names)) - _GENERIC
        if len(names) > 1 and common and prefix not in BROAD_PREFIXES:
            # listed near the top by several classes (EFO: Disease and PhenotypicFeature):
            # their closest common class, unless that says nothing (Gene and Protein)
            inferred[prefix] = class_curie(max(common, key=lambda name: len(parents[name])))
    return inferred


# -- slots -----------------------------------------------------------------------------------


def is_slot(name: str) -> bool:
    """Whether `name` (snake_case) is a Biolink slot."""
    return name in _model().slot_kinds


def slot_kind(column: str) -> SlotKind:
    """How a KGX column holds its value: by the Biolink slot of that name, text otherwise."""
    return _model().slot_kinds.get(column, "text")


# -- categories ------------------------------------------------------------------------------


def category_for_prefix(prefix: str) -> str:
    """The Biolink category KGX would give a node known only by an id with this prefix."""
    return _model().prefix_category.get(prefix, NAMED_THING)


def class_name(category: str) -> str | None:
    """The Biolink class a category names (`Gene`, `biolink:Gene`, `gene`), or None."""
    text = category.strip()
    curie = text if text.startswith(BIOLINK) else class_curie(text)
    return _model().classes.get(curie)


def load() -> None:
    """Read the Biolink model now, not in the first request that needs it (some 130 ms of CPU,
    holding the interpreter): `graphwright serve` does at start."""
    _class_by_key()


@lru_cache(maxsize=4096)
def type_name(raw: str) -> str:
    """The one spelling of a node type: its Biolink class name (`gene`, ` Gene `, `GENE` and
    `biolink:Gene` give `Gene`; `small molecule` and `small_molecule` give `SmallMolecule`), or
    for any other type the PascalCase of its words (`cell line` gives `CellLine`)."""
    text = raw.strip()
    if text[: len(BIOLINK)].lower() == BIOLINK:
        text = text[len(BIOLINK) :].strip()
    words = [word for word in _TYPE_WORD.split(text) if word]
    if not words:
        return raw.strip()
    pascal = "".join(word[:1].upper() + word[1:] for word in words)
    return _class_by_key().get(pascal.lower(), pascal)


@cache
def _class_by_key() -> dict[str, str]:
    """Each class's PascalCase name by its lower-cased form, to find a class whatever its case."""
    return {name.lower(): name for name in (c.removeprefix(BIOLINK) for c in _model().classes)}


def nearest_main_class(category: str) -> str | None:
    """The class's closest ancestor (itself included) among `MAIN_CLASSES`, or None."""
    name = class_name(category)
    if name is None:
        return None
    parents = _model().parents
    mains = [main for main in MAIN_CLASSES if main in parents[name]]
    return max(mains, key=lambda main: len(parents[main]), default=None)


def id_prefixes(category: str) -> tuple[str, ...]:
    """The class's preferred id prefixes, best first (empty for an unknown class)."""
    name = class_name(category)
    return _model().id_prefixes.get(name, ()) if name else ()


def prefix_order() -> tuple[str, ...]:
    """Every prefix a main class lists, in the order it leads a set of equivalent ids: each
    prefix belongs to the main class that lists it earliest; classes in `MAIN_CLASSES` order,
    within a class its `id_prefixes` order. Broad vocabularies come last."""
    model = _model()
    home: dict[str, tuple[int, int]] = {}  # prefix -> (position, main class)
    for main, name in enumerate(MAIN_CLASSES):
        for position, prefix in enumerate(model.id_prefixes.get(name, ())):
            if prefix not in BROAD_PREFIXES:
                home[prefix] = min(home.get(prefix, (position, main)), (position, main))
    ordered = sorted(home, key=lambda prefix: (home[prefix][1], home[prefix][0], prefix))
    return (*ordered, *sorted(BROAD_PREFIXES))


def compatible(first: Iterable[str], second: Iterable[str]) -> tuple[bool, str]:
    """Whether nodes with these categories may be one entity, and if not, why.

    Unknown categories (not Biolink classes) and nodes without one say nothing. Each side is
    reduced to its most specific classes; every pair across the two sides must be related by
    is_a (one an ancestor of the other) or sit together under a kind that Translator conflates
    (genes with gene products, chemical entities with drugs).
    """
    model = _model()
    left, right = _leaves(first), _leaves(second)
    for a in left:
        for b in right:
            if b in model.parents[a] or a in model.parents[b]:
                continue
            shared = model.ancestors[a] & model.ancestors[b]
            if any(kind in shared for kind in _CONFLATED):
                continue
            return False, f"categories {class_curie(a)} and {class_curie(b)} are incompatible"
    return True, ""


def _leaves(categories: Iterable[str]) -> set[str]:
    model = _model()
    names = {name for category in categories if (name := class_name(category)) is not None}
    return {name for name in names if not any(name in model.parents[o] for o in names - {name})}
