"""What no backend stores (NUL, lone surrogates) is shown as U+FFFD in text graphwright keeps
from a model; everything else is kept as it came."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphwright.core.nul import storable, storable_text


def test_nul_and_lone_surrogates_become_replacement_characters() -> None:
    assert storable_text("a\x00b\ud800c\udfffd") == "a\ufffdb\ufffdc\ufffdd"


def test_a_surrogate_pair_split_across_chunks_is_joined_into_its_character() -> None:
    assert storable_text("smile " + "\ud83d" + "\ude00") == "smile \U0001f600"


def test_strings_anywhere_in_tool_arguments_are_mended_keys_included() -> None:
    arguments = {"q\x00": ["x\ud800", {"n": 1, "t": "ok"}], "flag": True}
    assert storable(arguments) == {"q\ufffd": ["x\ufffd", {"n": 1, "t": "ok"}], "flag": True}


@given(st.text(st.characters(exclude_categories=[])))  # lone surrogates (Cs) too
def test_the_result_is_always_storable_and_valid_text_is_kept(text: str) -> None:
    mended = storable_text(text)
    mended.encode("utf-8")  # no lone surrogate left
    assert "\x00" not in mended
    if "\x00" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert mended == text
