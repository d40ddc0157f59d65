"""Neo4j files, read back by neo4j-admin's documented CSV rules and by a reader of the Cypher
script's literals: both give the graph's nodes, labels, relationships and properties.

No Neo4j server runs here, so these readers follow the import tool's documentation
(operations manual, "Import": header `name:type`, the type after the last `:`, `(group)` id
spaces, `"` quotes doubled inside, an empty unquoted field for no property, arrays split by
--array-delimiter, --multiline-fields) and Cypher's literal syntax.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.core.formats import write_graph_files
from graphwright.core.graph import load_graph
from tests.core.test_formats import graphs

SAMPLE = {
    "nodes": [
        {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene", "synonym": ["p53", "a;b"]},
        {"id": "MONDO:0005148", "name": 'type 2 "diabetes"\nmellitus', "category": "Disease"},
        {"id": "CHEBI:6801", "name": "metformin", "category": ["Drug", "SmallMolecule"], "n": 2},
        {"id": "X:1", "n": 0.5, "odd{key}": {"a": [1, None]}, "flag": True},
    ],
    "links": [
        {
            "source": "ncbigene:7157",
            "target": "MONDO:0005148",
            "label": "associated with",
            "evidence": ["PMID:111", "PMID:222"],
            "confidence": 0.9,
        },
        {"source": "CHEBI:6801", "target": "MONDO:0005148", "label": "treats", "evidence": []},
        {"source": "X:1", "target": "X:1", "predicate": "RO:0002434", "label": "x", "evidence": []},
    ],
}


# -- neo4j-admin's CSV rules -----------------------------------------------------------------


def csv_rows(text: str) -> list[list[str | None]]:
    """Fields by the import tool's defaults: `,`, `"` quotes with `""` for a quote, fields over
    several lines (--multiline-fields=true); an empty unquoted field is None (no value)."""
    rows: list[list[str | None]] = []
    row: list[str | None] = []
    i = 0
    while i < len(text):
        if text[i] == '"':
            value, i = [], i + 1
            while True:
                if text[i] == '"' and text[i + 1 : i + 2] == '"':
                    value.append('"')
                    i += 2
                elif text[i] == '"':
                    i += 1
                    break
                else:
                    value.append(text[i])
                    i += 1
            field: str | None = "".join(value)
        else:
            start = i
            while i < len(text) and text[i] not in ",\n":
                i += 1
            field = text[start:i] or None
        row.append(field)
        if i < len(text) and text[i] == ",":
            i += 1
        elif i >= len(text) or text[i] == "\n":
            rows.append(row)
            row = []
            i += 1
    return rows


def header_entry(raw: str) -> tuple[str | None, str | None, str | None]:
    """(name, type, group) as the import tool's header parser splits `name:type(group)`."""
    type_at = raw.rfind(":")
    group = None
    if type_at != -1 and raw.rfind("(") > type_at:
        group = raw[raw.rfind("(") + 1 : raw.rfind(")")]
        raw = raw[: raw.rfind("(")]
    name, kind = (raw[:type_at], raw[type_at + 1 :]) if type_at != -1 else (raw, None)
    return name or None, kind, group


def convert(text: str, kind: str, delimiter: str) -> Any:
    if kind.endswith("[]"):
        return (
            [convert(item, kind[:-2], delimiter) for item in text.split(delimiter)] if text else []
        )
    return {
        "string": str,
        "long": int,
        "double": float,
        "boolean": lambda t: {"true": True, "false": False}[t],
    }[kind](text)


def read_csv(text: str, delimiter: str) -> list[dict[str, Any]]:
    header, *rows = csv_rows(text)
    entries = [header_entry(raw or "") for raw in header]
    records = []
    for row in rows:
        assert len(row) == len(entries)
        record: dict[str, Any] = {"props": {}}
        for (name, kind, group), field in zip(entries, row, strict=True):
            if kind in ("ID", "START_ID", "END_ID"):
                assert group == "Node"
                record[kind] = field
                if kind == "ID":
                    record["props"][name] = field
            elif kind in ("LABEL", "TYPE"):
                record[kind] = field.split(delimiter) if kind == "LABEL" else field
            elif field is not None:
                assert name is not None and kind is not None
                record["props"][name] = convert(field, kind, delimiter)
        records.append(record)
    return records


# -- the Cypher script -----------------------------------------------------------------------

TOKEN = re.compile(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<name>`(?:[^`]|``)*`|[A-Za-z_]\w*)'
    r"|(?P<number>-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)|(?P<punct>[\[\]{},:]))"
)


def cypher_literal(text: str) -> Any:
    """A Cypher literal (maps, lists, strings, numbers, true/false/null) as a Python value."""
    tokens = []
    position = 0
    while position < len(text.rstrip()):
        found = TOKEN.match(text, position)
        assert found, f"not a Cypher literal at {text[position : position + 30]!r}"
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        position = found.end()
    value, rest = _value(tokens)
    assert not rest
    return value


def _value(tokens: list[tuple[str | None, str]]) -> tuple[Any, list[tuple[str | None, str]]]:
    (kind, text), rest = tokens[0], tokens[1:]
    if text == "[":
        items: list[Any] = []
        while rest[0][1] != "]":
            item, rest = _value(rest)
            items.append(item)
            rest = rest[1:] if rest[0][1] == "," else rest
        return items, rest[1:]
    if text == "{":
        entries: dict[str, Any] = {}
        while rest[0][1] != "}":
            key_kind, key = rest[0]
            assert key_kind == "name" and rest[1][1] == ":"
            entries[_name(key)], rest = _value(rest[2:])
            rest = rest[1:] if rest[0][1] == "," else rest
        return entries, rest[1:]
    if kind == "string":
        return orjson.loads(text), rest
    if kind == "number":
        return orjson.loads(text), rest
    return {"true": True, "false": False, "null": None}[text], rest


def _name(text: str) -> str:
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


NODE_STATEMENT = re.compile(
    r"UNWIND \$batch AS row MERGE \(n:NamedThing \{id: row\.id\}\) SET n \+= row\.props"
    r"(?:, n(?P<labels>(?::(?:`(?:[^`]|``)*`|[A-Za-z_]\w*))+))?;"
)
LINK_STATEMENT = re.compile(
    r"UNWIND \$batch AS row MATCH \(a:NamedThing \{id: row\.start\}\) "
    r"MATCH \(b:NamedThing \{id: row\.end\}\) "
    r"CREATE \(a\)-\[r:(?P<type>`(?:[^`]|``)*`|[A-Za-z_]\w*)\]->\(b\) SET r = row\.props;"
)
LABEL = re.compile(r":(`(?:[^`]|``)*`|[A-Za-z_]\w*)")


def read_cypher(script: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    lines = script.rstrip("\n").split("\n")
    assert lines[1] == (
        "CREATE CONSTRAINT graphwright_node_id IF NOT EXISTS "
        "FOR (n:NamedThing) REQUIRE n.id IS UNIQUE;"
    )
    nodes, links = [], []
    body = lines[2:]
    assert len(body) % 2 == 0
    for param, statement in zip(body[::2], body[1::2], strict=True):
        assert param.startswith(":param {batch: ") and param.endswith("}")
        batch = cypher_literal(param.removeprefix(":param ").strip())["batch"]
        assert 0 < len(batch) <= 500
        if node := NODE_STATEMENT.fullmatch(statement):
            labels = [_name(x) for x in LABEL.findall(node["labels"] or "")]
            for row in batch:
                props = {"id": row["id"], **row["props"]}
                nodes.append({"ID": row["id"], "LABEL": [*labels, "NamedThing"], "props": props})
        else:
            link = LINK_STATEMENT.fullmatch(statement)
            assert link, statement
            for row in batch:
                links.append(
                    {
                        "START_ID": row["start"],
                        "END_ID": row["end"],
                        "TYPE": _name(link["type"]),
                        "props": row["props"],
                    }
                )
    return nodes, links


# -- the tests -------------------------------------------------------------------------------


def delimiter_of(import_sh: str) -> str:
    found = re.search(r"--array-delimiter='([^']+)'", import_sh)
    assert found
    text = found.group(1)
    return chr(int(text[2:], 16)) if text.startswith("U+") else text


def database(files: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    delimiter = delimiter_of(files["import.sh"])
    return read_csv(files["nodes.csv"], delimiter), read_csv(files["relationships.csv"], delimiter)


def _key(record: dict[str, Any]) -> str:
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS).decode()


def kept(original: Any, stored: Any) -> bool:
    """A value as Neo4j holds it: the same, a double for a long, or JSON text for the rest."""
    if stored == original and type(stored) is type(original):
        return True
    if isinstance(original, int | list) and stored == original:  # longs among doubles
        return True
    return isinstance(stored, str) and orjson.loads(stored) == original


def test_csv_by_neo4j_admins_rules_holds_the_graph() -> None:
    files = write_graph_files(SAMPLE, "neo4j")
    assert files["nodes.csv"].splitlines()[0].startswith("id:ID(Node),:LABEL,")
    assert files["relationships.csv"].startswith(":START_ID(Node),:END_ID(Node),:TYPE,")
    assert delimiter_of(files["import.sh"]) == "|"  # a synonym holds `;`
    nodes, links = database(files)
    tp53, t2d, metformin, odd = nodes
    assert tp53["LABEL"] == ["Gene", "NamedThing"]
    assert metformin["LABEL"] == ["Drug", "SmallMolecule", "NamedThing"]
    assert odd["LABEL"] == ["NamedThing"]
    assert tp53["props"]["synonym"] == ["p53", "a;b"]
    assert t2d["props"]["name"] == 'type 2 "diabetes"\nmellitus'
    assert "synonym" not in t2d["props"]  # no value: no property
    assert metformin["props"]["n"] == 2.0 and odd["props"]["n"] == 0.5
    assert odd["props"]["odd_key_"] == '{"a":[1,null]}'
    assert odd["props"]["flag"] is True
    assert [(x["START_ID"], x["END_ID"], x["TYPE"]) for x in links] == [
        ("NCBIGene:7157", "MONDO:0005148", "associated_with"),
        ("CHEBI:6801", "MONDO:0005148", "treats"),
        ("X:1", "X:1", "RO:0002434"),
    ]
    assert links[0]["props"]["evidence"] == ["PMID:111", "PMID:222"]
    assert links[1]["props"]["evidence"] == []


def test_cypher_script_builds_the_same_database_with_quoted_names() -> None:
    files = write_graph_files(SAMPLE, "neo4j")
    script = files["import.cypher"]
    assert "CREATE (a)-[r:`RO:0002434`]->(b)" in script
    assert "SET n += row.props, n:Drug:SmallMolecule;" in script
    assert "`odd_key_`" not in script and "odd_key_: " in script
    nodes, links = read_cypher(script)
    csv_nodes, csv_links = database(files)
    assert sorted(map(_key, nodes)) == sorted(map(_key, csv_nodes))
    assert sorted(map(_key, links)) == sorted(map(_key, csv_links))
    assert "import full" in files["import.sh"] and "--multiline-fields=true" in files["import.sh"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_every_graph_reads_back_the_same_by_both_routes(graph: dict[str, Any]) -> None:
    loaded = load_graph(graph)
    ids = [node["id"] for node in loaded["nodes"]]
    if len(set(ids)) != len(ids):
        return
    files = write_graph_files(loaded, "neo4j")
    csv_nodes, csv_links = database(files)
    nodes, links = read_cypher(files["import.cypher"])
    assert sorted(map(_key, nodes)) == sorted(map(_key, csv_nodes))
    assert sorted(map(_key, links)) == sorted(map(_key, csv_links))
    assert [n["ID"] for n in csv_nodes] == ids
    for node, record in zip(loaded["nodes"], csv_nodes, strict=True):
        for key, value in node.items():
            if key != "id" and "{" not in key and "}" not in key and key:
                assert kept(value, record["props"][key]), (key, value, record["props"][key])
    for link, record in zip(loaded["links"], csv_links, strict=True):
        assert record["TYPE"]
        for key, value in link.items():
            if key not in ("source", "target") and "{" not in key and "}" not in key and key:
                assert kept(value, record["props"][key]), (key, value, record["props"][key])


def test_graph_convert_to_neo4j_writes_the_directory(tmp_path: Path) -> None:
    source = tmp_path / "graph.json"
    source.write_bytes(orjson.dumps(SAMPLE))
    result = CliRunner().invoke(
        app, ["graph", "convert", str(source), str(tmp_path / "neo"), "--to", "neo4j"]
    )
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "neo").iterdir())
    assert written == ["import.cypher", "import.sh", "nodes.csv", "relationships.csv"]
    assert (tmp_path / "neo" / "nodes.csv").read_text() == write_graph_files(SAMPLE, "neo4j")[
        "nodes.csv"
    ]


@pytest.mark.parametrize("fmt", ["neo5j"])
def test_unknown_output_formats_name_neo4j_too(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / "graph.json"
    source.write_bytes(orjson.dumps(SAMPLE))
    result = CliRunner().invoke(app, ["graph", "convert", str(source), "out", "--to", fmt])
    assert result.exit_code != 0
    assert "neo4j" in result.output
