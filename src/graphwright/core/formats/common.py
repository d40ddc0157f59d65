"""What the format modules share: link keys, the escape for clashing keys, and Biolink names.

Each keyed format (TRAPI, KGX, GraphML, Cytoscape) needs a key per link. A link keeps its own
string `id` when no earlier link took it; the others get `gw-link-<position>`, which readers
drop again, so a graph without link ids does not gain any on a round trip.

A format field that a reader rebuilds (KGX `category` from the node's `category`, say) cannot
also carry a graph property of the same name whose value it would not give back. The writer then
stores that property under `graphwright:<name>` and the reader restores it, which keeps round
trips exact. Graph keys that already start with `graphwright:` are escaped the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

GRAPHWRIGHT = "graphwright:"
BIOLINK = "biolink:"
AUTO_LINK_PREFIX = "gw-link-"
DEFAULT_PREDICATE = "biolink:related_to"

_AUTO_LINK_ID = re.compile(r"gw-link-\d+")
_CURIE = re.compile(r"[A-Za-z_][\w.-]*:\S+")
_NOT_SNAKE = re.compile(r"[^0-9a-z]+")
_WORD_BREAK = re.compile(r"[\s_]+")

Node = dict[str, Any]
Link = dict[str, Any]


def link_keys(links: list[Link], usable: Callable[[str], bool] = bool) -> list[tuple[str, bool]]:
    """The key of each link, and whether that key is the link's own `id` (so `id` is used up).

    `usable` tells whether the format can hold an id as a key; the default takes any non-empty one.
    """
    taken: set[str] = set()
    keys: list[tuple[str, bool]] = []
    for position, link in enumerate(links):
        own = link.get("id")
        if (
            isinstance(own, str)
            and usable(own)
            and own not in taken
            and not _AUTO_LINK_ID.fullmatch(own)
        ):
            taken.add(own)
            keys.append((own, True))
        else:
            keys.append((f"{AUTO_LINK_PREFIX}{position}", False))
    return keys


def is_auto_link_key(key: str) -> bool:
    return _AUTO_LINK_ID.fullmatch(key) is not None


def escaped(key: str, reserved: frozenset[str]) -> str:
    """`key` as written next to a format's own fields `reserved`."""
    return GRAPHWRIGHT + key if key in reserved or key.startswith(GRAPHWRIGHT) else key


def split_escaped(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(plain keys, escaped keys with the escape removed) of a record read from a format."""
    plain: dict[str, Any] = {}
    restored: dict[str, Any] = {}
    for key, value in record.items():
        if key.startswith(GRAPHWRIGHT):
            restored[key[len(GRAPHWRIGHT) :]] = value
        else:
            plain[key] = value
    return plain, restored


def is_curie(value: Any) -> bool:
    return isinstance(value, str) and _CURIE.fullmatch(value) is not None


# -- categories ------------------------------------------------------------------------------


def categories_for(value: Any) -> list[str] | None:
    """Biolink categories for a node `category`: CURIEs kept, names made `biolink:PascalCase`."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        return None
    if not all(isinstance(item, str) and item.strip() for item in items):
        return None
    return [_biolink_class(item) for item in items]


def _biolink_class(name: str) -> str:
    text = name.strip()
    if ":" in text:
        return text
    words = _WORD_BREAK.split(text)
    return BIOLINK + "".join(word[:1].upper() + word[1:] for word in words if word)


def category_from(categories: list[str]) -> str | list[str]:
    """A node `category` for Biolink categories: the prefix dropped, one category as a string."""
    names = [category.removeprefix(BIOLINK) for category in categories]
    return names[0] if len(names) == 1 else names


def node_categories(node: Node) -> tuple[list[str] | None, bool]:
    """(categories to write, whether a reader gives back the node's `category` from them).

    A node without `category` is typed by its seed-style `entityType` when it has one.
    """
    if "category" not in node:
        entity_type = node.get("entityType")
        return (categories_for(entity_type) if entity_type is not None else None), True
    value = node["category"]
    categories = categories_for(value)
    return categories, categories is not None and category_from(categories) == value


# -- predicates ------------------------------------------------------------------------------


def predicate_for(label: Any) -> str:
    """The Biolink predicate for a link label: CURIEs kept, words made `biolink:snake_case`."""
    if not isinstance(label, str):
        return DEFAULT_PREDICATE
    text = label.strip()
    if is_curie(text):
        return text
    snake = _NOT_SNAKE.sub("_", text.lower()).strip("_")
    return BIOLINK + snake if snake else DEFAULT_PREDICATE


def label_from(predicate: str) -> str:
    """The link label for a predicate: `biolink:negatively_regulates` -> `negatively regulates`."""
    if predicate.startswith(BIOLINK):
        return predicate[len(BIOLINK) :].replace("_", " ")
    return predicate


def link_predicate(link: Link) -> tuple[str, set[str]]:
    """(predicate to write, the link keys a reader rebuilds from it, so they need no other field).

    The predicate is the link's own CURIE `predicate`, else derived from its `label`. A reader
    gives back `label` from the predicate, and `predicate` when the label would not give it.
    A link with no label reads back with the predicate's label.
    """
    label = link.get("label")
    own = link.get("predicate")
    predicate = own if is_curie(own) else predicate_for(label)
    rebuilt = set()
    if "label" not in link or label_from(predicate) == label:
        rebuilt.add("label")
    reader_label = label if "label" in link else label_from(predicate)
    if own == predicate and predicate != predicate_for(reader_label):
        rebuilt.add("predicate")
    return predicate, rebuilt


def restore_link_fields(link: Link, predicate: str) -> None:
    """Give a link read from a format its `label` and, when needed, its exact `predicate`."""
    link.setdefault("label", label_from(predicate))
    if "predicate" not in link and predicate != predicate_for(link["label"]):
        link["predicate"] = predicate
