"""The merge rules for values (docs/merge.md, rules 3 and 5) as DuckDB macros.

A value is JSON text. A group (a node's class, a link's key) gathers each field's values in
input order, and these macros give what `merge_values._merge_property` would leave after
merging them one by one: the first non-empty value wins; differing scalars before the first
list are conflicts (the kept one first); from the first list on, values are unioned into it
(a list keeps its own repeats; later items join when new).
"""

from __future__ import annotations

from collections.abc import Collection

import orjson

from graphwright.core.batch_merge.inputs import literal

# `PMID:<digits>` stays as written, other PMID spellings become it (ids.normalize_pmid), and
# any other string is trimmed; items that are not strings compare as JSON text.
_PMID_TEXT = (
    r"(?i)\s*(?:pmid\s*:?\s*|(?:https?://)?(?:www\.)?pubmed\.ncbi\.nlm\.nih\.gov/)([0-9]+)/?\s*"
)

MACROS = [
    "CREATE OR REPLACE MACRO gw_empty(v) AS v IN ('null', '\"\"', '[]', '{}')",
    "CREATE OR REPLACE MACRO gw_items(v) AS CASE WHEN json_type(v::VARCHAR) = 'ARRAY' "
    "THEN json_extract(v, '$[*]')::VARCHAR[] ELSE [v] END",
    # kgx.node_from_record: a category (a string, or a list of strings) loses `biolink:`
    "CREATE OR REPLACE MACRO gw_unprefixed(s) AS "
    "CASE WHEN starts_with(s, 'biolink:') THEN s[9:] ELSE s END",
    "CREATE OR REPLACE MACRO gw_category(v) AS CASE "
    "WHEN json_type(v::VARCHAR) = 'VARCHAR' THEN to_json(gw_unprefixed(v::JSON->>'$'))::VARCHAR "
    "WHEN json_type(v::VARCHAR) = 'ARRAY' AND json_array_length(v) > 0 AND list_bool_and("
    "list_transform(json_extract(v, '$[*]'), lambda x: json_type(x::VARCHAR) = 'VARCHAR')) "
    "THEN CASE "
    "WHEN json_array_length(v) = 1 THEN to_json(gw_unprefixed(v::JSON->>'$[0]'))::VARCHAR "
    "ELSE to_json(list_transform(json_extract_string(v, '$[*]'), "
    "lambda x: gw_unprefixed(x)))::VARCHAR END "
    "ELSE v END",
    f"CREATE OR REPLACE MACRO gw_pmid(s) AS CASE "
    f"WHEN regexp_full_match(s, 'PMID:[0-9]+') THEN s "
    f"WHEN regexp_full_match(s, '{_PMID_TEXT}') THEN 'PMID:' || coalesce(nullif(ltrim("
    f"regexp_extract(s, '{_PMID_TEXT}', 1), '0'), ''), '0') "
    r"ELSE regexp_replace(s, '^\s+|\s+$', '', 'g') END",
    "CREATE OR REPLACE MACRO gw_item(x) AS CASE WHEN json_type(x::VARCHAR) = 'VARCHAR' "
    "THEN to_json(gw_pmid(x::JSON->>'$'))::VARCHAR ELSE x END",
    "CREATE OR REPLACE MACRO gw_evidence(v) AS CASE WHEN v IS NULL OR v = 'null' "
    "THEN []::VARCHAR[] ELSE list_transform(gw_items(v), lambda x: gw_item(x)) END",
    # order-keeping de-duplication
    "CREATE OR REPLACE MACRO gw_dedupe(xs) AS "
    "list_filter(xs, lambda x, i: list_position(xs, x) = i)",
    "CREATE OR REPLACE MACRO gw_array(xs) AS '[' || array_to_string(xs, ',') || ']'",
    # values of one field in input order -> the kept value and the conflicts
    "CREATE OR REPLACE MACRO gw_first_list(ne) AS coalesce(nullif(list_position("
    "list_transform(ne, lambda x: json_type(x::VARCHAR) = 'ARRAY'), true), 0), len(ne) + 1)",
    "CREATE OR REPLACE MACRO gw_union(base, rest) AS base || list_filter(rest, "
    "lambda x, i: NOT list_contains(base, x) AND list_position(rest, x) = i)",
    "CREATE OR REPLACE MACRO gw_listed(ne, p) AS gw_array(gw_union("
    "CASE WHEN p = 1 THEN gw_items(ne[1]) ELSE [ne[1]] END, "
    "flatten(list_transform(ne[CASE WHEN p = 1 THEN 2 ELSE p END:], lambda x: gw_items(x)))))",
    "CREATE OR REPLACE MACRO gw_kept(vals, ne) AS CASE "
    "WHEN len(ne) = 0 THEN vals[1] WHEN len(ne) = 1 THEN ne[1] "
    "WHEN gw_first_list(ne) > len(ne) THEN ne[1] ELSE gw_listed(ne, gw_first_list(ne)) END",
    "CREATE OR REPLACE MACRO gw_value(vals) AS "
    "gw_kept(vals, list_filter(vals, lambda x: NOT gw_empty(x)))",
    "CREATE OR REPLACE MACRO gw_clash(ne) AS gw_dedupe(ne[1:gw_first_list(ne) - 1])",
    "CREATE OR REPLACE MACRO gw_conflicts(vals) AS CASE WHEN len(gw_clash("
    "list_filter(vals, lambda x: NOT gw_empty(x)))) > 1 THEN gw_array(gw_clash("
    "list_filter(vals, lambda x: NOT gw_empty(x)))) END",
]


def json_key(name: str) -> str:
    """A record key as JSON text inside SQL (for building objects by concatenation)."""
    return literal(orjson.dumps(name).decode() + ":")


def json_object(members: list[tuple[str, str]], held: Collection[str] = ()) -> str:
    """SQL building a JSON object from (key, JSON text expression) pairs; NULL members are
    left out. Members named in `held` are never NULL and are written as they are, without the
    test for NULL (millions of records: one `concat` costs half a `concat_ws` of pairs)."""
    members = [(key, expression) for key, expression in members if expression != "NULL"]
    if not members or members[0][0] not in held:
        parts = ", ".join(f"{json_key(key)} || {expression}" for key, expression in members)
        return f"'{{' || concat_ws(',', {parts}) || '}}'"
    pieces = []
    for number, (key, expression) in enumerate(members):
        name = literal(("{" if number == 0 else ",") + orjson.dumps(key).decode() + ":")
        pieces.append(f"{name}, {expression}" if key in held else f"{name} || {expression}")
    return f"concat({', '.join(pieces)}, '}}')"
