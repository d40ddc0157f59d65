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


def test_a_value_nested_deeper_than_python_recurses_is_mended() -> None:
    """A tool's result is any server's JSON: its depth is not ours to choose."""
    deep: object = "x\x00"
    for _ in range(5_000):
        deep = {"k": [deep]}
    mended = storable(deep)
    for _ in range(5_000):
        [mended] = mended["k"]
    assert mended == "x\ufffd"


ANY_TEXT = st.text(st.characters(exclude_categories=[]), max_size=8)
JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: (
        st.lists(inner, max_size=4)
        # Two keys that mend alike ("a\x00", "a\ufffd") become one: not what this compares.
        | st.dictionaries(ANY_TEXT, inner, max_size=4).filter(
            lambda keys: len({storable_text(key) for key in keys}) == len(keys)
        )
    ),
    max_leaves=20,
)


def _clean(text: str) -> bool:
    return "\x00" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for child in value.values() for s in _strings(child))]
    if isinstance(value, list):
        return [s for child in value for s in _strings(child)]
    return []


@given(JSON_LIKE)
def test_every_string_in_a_value_is_mended_and_a_clean_value_is_kept(value: object) -> None:
    mended = storable(value)
    assert all(_clean(text) for text in _strings(mended))
    if all(_clean(text) for text in _strings(value)):
        assert mended == value
    assert _strings(mended) == [storable_text(text) for text in _strings(value)]
