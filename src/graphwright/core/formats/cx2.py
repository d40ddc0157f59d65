"""CX2, the network format of Cytoscape and NDEx (a JSON list of aspects).

Nodes and edges get integer ids; a node's graph id is its `represents` attribute (NDEx's name for
what a node stands for) and its `name` is Cytoscape's label. A link's `label` is also written as
its `interaction`, the edge type Cytoscape shows. Every other property is an attribute of the
same name, declared in `attributeDeclarations` with the CX2 type most of its values fit. A value
that fits no CX2 type, or not its attribute's type (null, an object, a mixed list, a string among
numbers), is written as JSON text under `graphwright:json:<name>`, declared `string`, so the
round trip gives it back. Names clashing with `represents` / `interaction` are escaped as
`graphwright:<name>` (core/formats/common.py).

Nodes are coloured as the web UI colours them (core/palette.py): a bypass per node, and a
discrete mapping on `category` for Cytoscape users who restyle the network.
"""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.formats.common import GRAPHWRIGHT, escaped
from graphwright.core.formats.typed import column_type, fits
from graphwright.core.graph import GraphFormatError, load_graph, parse_json
from graphwright.core.ids import normalize_curie
from graphwright.core.palette import UNTYPED, type_colour

NODE_ID = "represents"
INTERACTION = "interaction"
NODE_RESERVED = frozenset({NODE_ID})
EDGE_RESERVED = frozenset({INTERACTION})
JSON_MARK = GRAPHWRIGHT + "json:"
# Endpoint spellings that differ from the node id (`ncbigene:7157` for `NCBIGene:7157`).
EDGE_ENDS = ("source", "target")
CX2_TYPES = frozenset(
    {"string", "boolean", "long", "integer", "double"}
    | {f"list_of_{t}" for t in ("string", "boolean", "long", "integer", "double")}
)

Graph = dict[str, Any]
Record = dict[str, Any]


# -- writing ---------------------------------------------------------------------------------


def write(graph: Graph) -> str:
    nodes, links = graph["nodes"], graph["links"]
    index = {node["id"]: position for position, node in enumerate(nodes)}
    normalized = {normalize_curie(node["id"]): position for position, node in enumerate(nodes)}

    def position_of(ref: str) -> int:
        return index[ref] if ref in index else normalized[normalize_curie(ref)]

    node_records = [_node_record(node) for node in nodes]
    ends = [(position_of(link["source"]), position_of(link["target"])) for link in links]
    edge_records = [_edge_record(link, nodes, end) for link, end in zip(links, ends, strict=True)]
    network = {escaped(k, frozenset()): v for k, v in graph.items() if k not in ("nodes", "links")}
    node_types, node_values = _typed(node_records)
    edge_types, edge_values = _typed(edge_records)
    network_types, (network_values,) = _typed([network])
    colours = [type_colour(_node_type(node)) for node in nodes]
    aspects: list[dict[str, Any]] = [
        {"CXVersion": "2.0", "hasFragments": False},
        {
            "metaData": [
                {"name": "attributeDeclarations", "elementCount": 1},
                {"name": "networkAttributes", "elementCount": 1},
                {"name": "nodes", "elementCount": len(nodes)},
                {"name": "edges", "elementCount": len(links)},
                {"name": "visualProperties", "elementCount": 1},
                {"name": "nodeBypasses", "elementCount": len(nodes)},
            ]
        },
        {
            "attributeDeclarations": [
                {"networkAttributes": network_types, "nodes": node_types, "edges": edge_types}
            ]
        },
        {"networkAttributes": [network_values]},
        {"nodes": [{"id": i, "v": values} for i, values in enumerate(node_values)]},
        {
            "edges": [
                {"id": i, "s": source, "t": target, "v": values}
                for i, ((source, target), values) in enumerate(zip(ends, edge_values, strict=True))
            ]
        },
        {"visualProperties": [_style(nodes, node_types, edge_types)]},
        {
            "nodeBypasses": [
                {"id": i, "v": {"NODE_BACKGROUND_COLOR": colour}}
                for i, colour in enumerate(colours)
            ]
        },
        {"status": [{"error": "", "success": True}]},
    ]
    return orjson.dumps(aspects, option=orjson.OPT_INDENT_2).decode()


def _node_record(node: Record) -> Record:
    record = {NODE_ID: node["id"]}
    for key, value in node.items():
        if key != "id":
            record[escaped(key, NODE_RESERVED)] = value
    return record


def _edge_record(link: Record, nodes: list[Record], ends: tuple[int, int]) -> Record:
    record: Record = {}
    for end, position in zip(EDGE_ENDS, ends, strict=True):
        if link[end] != nodes[position]["id"]:
            record[end] = link[end]
    if isinstance(link.get("label"), str):
        record[INTERACTION] = link["label"]
    for key, value in link.items():
        if key not in EDGE_ENDS:
            record[escaped(key, EDGE_RESERVED)] = value
    return record


def _typed(records: list[Record]) -> tuple[dict[str, Any], list[Record]]:
    """(attribute declarations, each record's `v`): values fitting their attribute's type as
    they are, the others as JSON text under `graphwright:json:<name>`."""
    columns: dict[str, list[Any]] = {}
    for record in records:
        for key, value in record.items():
            columns.setdefault(key, []).append(value)
    types = {key: column_type(values) for key, values in columns.items()}
    declarations: dict[str, Any] = {}
    rows: list[Record] = []
    for record in records:
        row: Record = {}
        for key, value in record.items():
            declared = types[key]
            if declared is not None and fits(value, declared):
                row[key] = value
                declarations[key] = {"d": declared}
            else:
                row[JSON_MARK + key] = orjson.dumps(value).decode()
                declarations[JSON_MARK + key] = {"d": "string"}
        rows.append(row)
    return declarations, rows


def _node_type(node: Record) -> str:
    """The type the web UI colours a node by (drawing/options.py `node_type`)."""
    value = node.get("type") or node.get("category") or node.get("entityType")
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value) if value else ""


def _style(nodes: list[Record], node_types: dict[str, Any], edge_types: dict[str, Any]) -> Record:
    node_mapping: Record = {}
    if node_types.get("name") == {"d": "string"}:
        node_mapping["NODE_LABEL"] = _passthrough("name")
    if node_types.get("category") == {"d": "string"}:
        values = sorted({n["category"] for n in nodes if isinstance(n.get("category"), str)})
        node_mapping["NODE_BACKGROUND_COLOR"] = {
            "type": "DISCRETE",
            "definition": {
                "attribute": "category",
                "type": "string",
                "map": [{"v": value, "vp": type_colour(value)} for value in values],
            },
        }
    edge_mapping: Record = {}
    if INTERACTION in edge_types:
        edge_mapping["EDGE_LABEL"] = _passthrough(INTERACTION)
    return {
        "default": {
            "network": {"NETWORK_BACKGROUND_COLOR": "#FFFFFF"},
            "node": {
                "NODE_BACKGROUND_COLOR": UNTYPED,
                "NODE_SHAPE": "ellipse",
                "NODE_WIDTH": 40,
                "NODE_HEIGHT": 40,
                "NODE_LABEL_COLOR": "#111827",
            },
            "edge": {
                "EDGE_LINE_COLOR": "#94A3B8",
                "EDGE_WIDTH": 1.5,
                "EDGE_TARGET_ARROW_SHAPE": "triangle",
                "EDGE_TARGET_ARROW_COLOR": "#94A3B8",
            },
        },
        "nodeMapping": node_mapping,
        "edgeMapping": edge_mapping,
    }


def _passthrough(attribute: str) -> Record:
    return {"type": "PASSTHROUGH", "definition": {"attribute": attribute, "type": "string"}}


# -- reading ---------------------------------------------------------------------------------


def read(data: str | bytes) -> Graph:
    """A CX2 network: ours gives back the graph it was written from; one from Cytoscape or NDEx
    gives nodes identified by `represents` (else by their CX2 id) and links labelled by their
    `interaction`."""
    document = parse_json(data)
    if not isinstance(document, list) or not all(isinstance(a, dict) for a in document):
        raise GraphFormatError("CX2 is a JSON list of aspect objects")
    aspects: dict[str, list[Any]] = {}
    for aspect in document:
        for name, elements in aspect.items():
            if isinstance(elements, list):
                aspects.setdefault(name, []).extend(elements)
    declared = _declarations(aspects.get("attributeDeclarations", []))
    graph: Graph = {}
    for attributes in aspects.get("networkAttributes", []):
        _, properties = _restored(_values(attributes, "networkAttributes", declared, "network"))
        graph.update(properties)
    nodes, by_cx_id = [], {}
    for index, element in enumerate(aspects.get("nodes", [])):
        cx_id = _element_id(element, "node", index)
        own, attributes = _restored(
            _values(element.get("v", {}), "nodes", declared, f"node {cx_id}"), (NODE_ID,)
        )
        node_id = own.get(NODE_ID)
        node = {"id": node_id if isinstance(node_id, str) and node_id.strip() else str(cx_id)}
        node.update(attributes)
        by_cx_id[cx_id] = node["id"]
        nodes.append(node)
    links = []
    for index, element in enumerate(aspects.get("edges", [])):
        cx_id = _element_id(element, "edge", index)
        where = f"edge {cx_id}"
        own, attributes = _restored(
            _values(element.get("v", {}), "edges", declared, where), (*EDGE_ENDS, INTERACTION)
        )
        link: Record = {}
        for end, key in zip(EDGE_ENDS, ("s", "t"), strict=True):
            if element.get(key) not in by_cx_id:
                raise GraphFormatError(f"CX2 {where}: `{key}` names no node")
            spelled = own.get(end)
            link[end] = spelled if isinstance(spelled, str) else by_cx_id[element[key]]
        interaction = own.get(INTERACTION)
        link.update(attributes)
        if "label" not in link and isinstance(interaction, str):
            link["label"] = interaction
        links.append(link)
    graph["nodes"], graph["links"] = nodes, links
    return load_graph(graph)


def _declarations(elements: list[Any]) -> dict[str, dict[str, Record]]:
    declared: dict[str, dict[str, Record]] = {}
    for element in elements:
        if not isinstance(element, dict):
            raise GraphFormatError("CX2 attributeDeclarations must hold objects")
        for aspect, attributes in element.items():
            if not isinstance(attributes, dict):
                raise GraphFormatError(f"CX2 attributeDeclarations of {aspect} must be an object")
            for name, declaration in attributes.items():
                kind = declaration.get("d", "string") if isinstance(declaration, dict) else None
                if kind not in CX2_TYPES:
                    raise GraphFormatError(
                        f"CX2 attribute {name!r} of {aspect} declares no CX2 type: {kind!r}"
                    )
            declared.setdefault(aspect, {}).update(attributes)
    return declared


def _values(values: Any, aspect: str, declared: dict[str, dict[str, Record]], where: str) -> Record:
    """An element's attributes by full name: aliases resolved, declared defaults filled in."""
    if not isinstance(values, dict):
        raise GraphFormatError(f"CX2 {where}: `v` must be an object")
    declarations = declared.get(aspect, {})
    aliases = {d["a"]: name for name, d in declarations.items() if isinstance(d.get("a"), str)}
    record = {
        name: d["v"] for name, d in declarations.items() if "v" in d and d.get("v") is not None
    }
    for key, value in values.items():
        record[aliases.get(key, key)] = value
    return record


def _restored(record: Record, own: tuple[str, ...] = ()) -> tuple[Record, Record]:
    """(the format's own attributes named in `own`, the others as graph properties: JSON text
    decoded, escaped names given back)."""
    fields: Record = {}
    plain: Record = {}
    restored: Record = {}
    for key, value in record.items():
        name = key
        if key.startswith(JSON_MARK) and isinstance(value, str):
            name = key[len(JSON_MARK) :]
            value = parse_json(value)
        if name.startswith(GRAPHWRIGHT):
            restored[name[len(GRAPHWRIGHT) :]] = value
        elif name in own:
            fields[name] = value
        else:
            plain[name] = value
    return fields, {**plain, **restored}


def _element_id(element: Any, kind: str, index: int) -> int:
    cx_id = element.get("id") if isinstance(element, dict) else None
    if type(cx_id) is not int:
        raise GraphFormatError(f"CX2 {kind} {index} needs an integer `id`")
    return cx_id
