"""Each node type has one colour, however it is spelled and whatever else is drawn."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from graphwright.core.palette import MAIN_CLASS_COLOURS, PALETTE, UNTYPED, type_colour


def test_spellings_of_one_biolink_class_share_a_colour() -> None:
    assert len({type_colour(t) for t in ("gene", "Gene", "biolink:Gene", " gene ")}) == 1
    assert type_colour("small molecule") == type_colour("SmallMolecule")


def test_a_subclass_takes_its_nearest_main_class_colour() -> None:
    assert type_colour("SmallMolecule") == MAIN_CLASS_COLOURS["chemical entity"]
    assert type_colour("biolink:Drug") == MAIN_CLASS_COLOURS["drug"]


def test_main_classes_are_told_apart() -> None:
    assert len(set(MAIN_CLASS_COLOURS.values())) == len(MAIN_CLASS_COLOURS)
    assert type_colour("Gene") != type_colour("Protein") != type_colour("Disease")


def test_untyped_and_generic_nodes_are_grey() -> None:
    assert type_colour("") == type_colour("other") == type_colour("NamedThing") == UNTYPED


@given(st.text(max_size=30))
def test_any_type_gets_a_palette_colour(name: str) -> None:
    colour = type_colour(name)
    assert re.fullmatch(r"#[0-9A-F]{6}", colour)
    assert colour in PALETTE or colour == UNTYPED or colour in MAIN_CLASS_COLOURS.values()
