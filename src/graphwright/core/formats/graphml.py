"""GraphML: nodes and edges with typed `<data>` values, read and written with lxml.

A property whose values are all booleans, all 64-bit integers, all floats or all strings gets
the matching GraphML type. Any other property (lists such as `evidence`, objects, null, mixed
types) is a string key whose values are JSON text; its `<key>` carries
`<desc>graphwright:json</desc>` so that the reader decodes it again. Keys without `attr.name`
(yEd's graphics keys, say) are ignored on read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import orjson
from lxml import etree

from graphwright.core.formats.common import is_auto_link_key, link_keys
from graphwright.core.graph import GraphFormatError, load_graph

NS = "http://graphml.graphdrawing.org/xmlns"
YED = "http://www.yworks.com/xml/graphml"
# yEd keeps labels in its graphics data (`<y:NodeLabel>`, `<y:EdgeLabel>`), not in a key.
_YED_LABELS = {"node": ("name", f"{{{YED}}}NodeLabel"), "edge": ("label", f"{{{YED}}}EdgeLabel")}
JSON_MARK = "graphwright:json"
_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_INT64 = 2**63
_NOT_XML_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]")
# Attribute values also lose tabs and line breaks to XML's whitespace normalisation.
_NOT_XML_ATTRIBUTE = re.compile(r"[\x00-\x1f\ud800-\udfff\ufffe\uffff]")

Scope = str  # "graph", "node" or "edge"


def _tag(name: str, namespace: str | None = NS) -> str:
    return f"{{{namespace}}}{name}" if namespace else name


# -- writing ---------------------------------------------------------------------------------


def write(graph: dict[str, Any]) -> str:
    try:
        root = _document(graph)
    except ValueError as exc:  # lxml refuses ids and names XML cannot hold
        raise GraphFormatError(f"GraphML cannot hold this graph: {exc}") from None
    return _DECLARATION + etree.tostring(root, encoding="unicode", pretty_print=True)


def _document(graph: dict[str, Any]) -> etree._Element:
    root = etree.Element(_tag("graphml"), nsmap={None: NS})
    links = graph["links"]
    keys = link_keys(links, usable=_is_attribute_safe)
    graph_props = {key: value for key, value in graph.items() if key not in ("nodes", "links")}
    # an undirected graph (`"directed": false`, as networkx and the reader give it) says so
    undirected = graph_props.get("directed") is False
    if undirected:
        del graph_props["directed"]
    node_props = [{k: v for k, v in node.items() if k != "id"} for node in graph["nodes"]]
    edge_props = [
        {k: v for k, v in link.items() if k not in ("source", "target") and (k != "id" or not own)}
        for link, (_, own) in zip(links, keys, strict=True)
    ]
    key_ids = {
        "graph": _declare_keys(root, "graph", [graph_props]),
        "node": _declare_keys(root, "node", node_props),
        "edge": _declare_keys(root, "edge", edge_props),
    }
    graph_element = etree.SubElement(
        root, _tag("graph"), edgedefault="undirected" if undirected else "directed"
    )
    _add_data(graph_element, graph_props, key_ids["graph"])
    for node, props in zip(graph["nodes"], node_props, strict=True):
        element = etree.SubElement(graph_element, _tag("node"), id=node["id"])
        _add_data(element, props, key_ids["node"])
    for link, (key, _), props in zip(links, keys, edge_props, strict=True):
        element = etree.SubElement(
            graph_element, _tag("edge"), id=key, source=link["source"], target=link["target"]
        )
        _add_data(element, props, key_ids["edge"])
    return root


def _is_attribute_safe(text: str) -> bool:
    return bool(text) and _NOT_XML_ATTRIBUTE.search(text) is None


def _declare_keys(
    root: etree._Element, scope: Scope, items: list[dict[str, Any]]
) -> dict[str, tuple[str, str]]:
    """Add a `<key>` per property of `items`; return name -> (key id, GraphML type or "json")."""
    kinds: dict[str, set[str | None]] = {}
    for item in items:
        for name, value in item.items():
            kinds.setdefault(name, set()).add(_scalar_kind(value))
    declared: dict[str, tuple[str, str]] = {}
    for index, (name, found) in enumerate(kinds.items()):
        kind = next(iter(found)) if len(found) == 1 else None
        key_id = f"{scope[0]}{index}"
        attr_type = kind or "string"
        element = etree.SubElement(
            root,
            _tag("key"),
            {"id": key_id, "for": scope, "attr.name": name, "attr.type": attr_type},
        )
        if kind is None:
            etree.SubElement(element, _tag("desc")).text = JSON_MARK
        declared[name] = (key_id, kind or "json")
    return declared


def _scalar_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long" if -_INT64 <= value < _INT64 else None
    if isinstance(value, float):
        return "double" if math.isfinite(value) else None
    if isinstance(value, str):
        # XML cannot hold most control characters and turns "\r" into "\n"; JSON escapes them.
        return None if _NOT_XML_TEXT.search(value) else "string"
    return None


def _add_data(
    element: etree._Element, props: dict[str, Any], key_ids: dict[str, tuple[str, str]]
) -> None:
    for name, value in props.items():
        key_id, kind = key_ids[name]
        data = etree.SubElement(element, _tag("data"), key=key_id)
        data.text = _text(value, kind)


def _text(value: Any, kind: str) -> str:
    if kind == "json":
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "double":
        return repr(value)
    return str(value)


# -- reading ---------------------------------------------------------------------------------


class _Key:
    def __init__(self, name: str, kind: str, default: Any) -> None:
        self.name = name
        self.kind = kind
        self.default = default


def read(data: str | bytes) -> dict[str, Any]:
    root = _parse(data)
    namespace = etree.QName(root).namespace
    keys = _read_keys(root, namespace)
    graph_element = root.find(_tag("graph", namespace))
    if graph_element is None:
        raise GraphFormatError("GraphML has no <graph> element")
    graph: dict[str, Any] = _props(graph_element, keys, "graph", namespace)
    if graph_element.get("edgedefault") == "undirected":
        graph.setdefault("directed", False)
    graph["nodes"] = [
        _node(element, keys, namespace)
        for element in graph_element.iterchildren(_tag("node", namespace))
    ]
    graph["links"] = [
        _link(element, keys, namespace)
        for element in graph_element.iterchildren(_tag("edge", namespace))
    ]
    return load_graph(graph)


def _parse(data: str | bytes) -> etree._Element:
    raw = data.encode() if isinstance(data, str) else data
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True
    )
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise GraphFormatError(f"invalid GraphML (not well-formed XML): {exc}") from None
    if not isinstance(root.tag, str) or etree.QName(root).localname != "graphml":
        raise GraphFormatError("not GraphML: the root element is not <graphml>")
    return root


def _read_keys(root: etree._Element, namespace: str | None) -> dict[tuple[str, str], _Key]:
    """(scope, key id) -> key; a key `for="all"` is listed under every scope."""
    keys: dict[tuple[str, str], _Key] = {}
    for element in root.iterchildren(_tag("key", namespace)):
        name = element.get("attr.name")
        key_id = element.get("id")
        if name is None or key_id is None:
            continue
        desc = element.findtext(_tag("desc", namespace))
        kind = "json" if desc == JSON_MARK else element.get("attr.type", "string")
        default_text = element.findtext(_tag("default", namespace))
        default = None if default_text is None else _decode(default_text, kind, name)
        scope = element.get("for", "all")
        scopes: Iterable[str] = ("graph", "node", "edge") if scope == "all" else (scope,)
        for each in scopes:
            keys[(each, key_id)] = _Key(name, kind, default)
    return keys


def _props(
    element: etree._Element,
    keys: dict[tuple[str, str], _Key],
    scope: Scope,
    namespace: str | None,
) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for data in element.iterchildren(_tag("data", namespace)):
        key = keys.get((scope, data.get("key", "")))
        if key is not None and not _only_markup(data):
            props[key.name] = _decode(data.text or "", key.kind, key.name)
    if scope in _YED_LABELS:
        name, tag = _YED_LABELS[scope]
        label = _yed_label(element, tag)
        if label is not None and name not in props:
            props[name] = label
    for (key_scope, _), key in keys.items():
        if key_scope == scope and key.default is not None and key.name not in props:
            props[key.name] = key.default
    return props


def _only_markup(data: etree._Element) -> bool:
    """Whether a <data> holds elements (yEd graphics) and no text but whitespace."""
    return len(data) > 0 and not (data.text or "").strip()


def _yed_label(element: etree._Element, tag: str) -> str | None:
    for label in element.iter(tag):
        text = "".join(label.itertext()).strip()
        if text:
            return text
    return None


def _node(
    element: etree._Element, keys: dict[tuple[str, str], _Key], namespace: str | None
) -> dict[str, Any]:
    node_id = element.get("id")
    if not node_id:
        raise GraphFormatError("GraphML <node> without an id")
    node = _props(element, keys, "node", namespace)
    node["id"] = node_id
    return node


def _link(
    element: etree._Element, keys: dict[tuple[str, str], _Key], namespace: str | None
) -> dict[str, Any]:
    edge_id = element.get("id")
    for end in ("source", "target"):
        if not element.get(end):
            shown = f"<edge id={edge_id!r}>" if edge_id else "<edge>"
            raise GraphFormatError(f"GraphML {shown} has no {end}")
    link = _props(element, keys, "edge", namespace)
    link["source"] = element.get("source")
    link["target"] = element.get("target")
    if edge_id and not is_auto_link_key(edge_id) and "id" not in link:
        link["id"] = edge_id
    return link


def _decode(text: str, kind: str, name: str) -> Any:
    try:
        if kind == "json":
            return orjson.loads(text)
        if kind == "boolean":
            return text.strip().lower() in ("true", "1")
        if kind in ("int", "long"):
            return int(text)
        if kind in ("float", "double"):
            return float(text)
    except (orjson.JSONDecodeError, ValueError):
        raise GraphFormatError(f"GraphML value {text[:40]!r} of {name!r} is not {kind}") from None
    return text
