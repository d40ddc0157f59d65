"""The colour of each node type, the same in every view and every export.

A type is named by its Biolink class however it is spelled (`gene`, `Gene`, `biolink:Gene`).
The main Biolink classes have fixed colours, and a subclass takes its nearest main class's
colour (`SmallMolecule` is drawn as `ChemicalEntity`). Any other type gets a colour from a hash
of its name, so it keeps that colour from one drawing to the next whatever else is drawn.
"""

from __future__ import annotations

import hashlib
from functools import cache

from graphwright.core.biolink import class_name, nearest_main_class

# Colour-blind-safe colours (Okabe-Ito, then Tol's muted), each readable against white.
PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255",
    "#117733", "#332288", "#999933", "#AA4499", "#44AA99", "#661100", "#6699CC",
)  # fmt: skip
# Nodes without a type, or with only a generic one, are grey.
UNTYPED = "#6B7280"
MAIN_CLASS_COLOURS = {
    "gene": "#D55E00",
    "protein": "#E69F00",
    "chemical entity": "#0072B2",
    "drug": "#56B4E9",
    "disease": "#CC79A7",
    "phenotypic feature": "#882255",
    "biological process": "#009E73",
    "molecular activity": "#117733",
    "pathway": "#44AA99",
    "cellular component": "#999933",
    "anatomical entity": "#661100",
    "cell": "#AA4499",
    "organism taxon": "#332288",
    "publication": "#6699CC",
}
_GENERIC = frozenset({"", "other", "entity", "named thing", "thing", "node"})


@cache
def type_colour(type_name: str) -> str:
    """The colour of nodes of this type, as `#RRGGBB`."""
    text = type_name.strip()
    biolink = class_name(text) if text else None
    if biolink is not None:
        main = nearest_main_class(biolink)
        if main is not None:
            return MAIN_CLASS_COLOURS[main]
    key = (biolink or text).lower()
    if key in _GENERIC:
        return UNTYPED
    digest = hashlib.blake2b(key.encode(), digest_size=4).digest()
    return PALETTE[int.from_bytes(digest, "big") % len(PALETTE)]
