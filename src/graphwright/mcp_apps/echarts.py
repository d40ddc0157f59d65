"""ECharts for the views, taken from the NiceGUI package installed with graphwright.

NiceGUI ships ECharts as an ES module (`elements/echart/dist/index.js`, which re-exports it from
a hashed chunk). A view cannot load files (its CSP allows inline scripts only), so the chunk is
inlined as a module script that also sets `globalThis.echarts`. The names are read from NiceGUI's
own entry module rather than hard-coded, so a NiceGUI upgrade that renames its chunks still works;
one that changes the bundle's shape fails here, by name, when the views are built.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

from graphwright.errors import GraphwrightError

_ENTRY = re.compile(
    r'import\{(?P<names>[^}]*)\}from"\./(?P<chunk>[\w.-]+\.js)";export\{(?P<exports>[^}]*)\}'
)
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)


def _nicegui_dir() -> Path:
    """Where NiceGUI is installed, found without importing it (that would load its whole UI)."""
    spec = importlib.util.find_spec("nicegui")
    if spec is None or not spec.submodule_search_locations:
        raise GraphwrightError("NiceGUI is not installed: it provides the views' ECharts")
    return Path(next(iter(spec.submodule_search_locations)))


def _aliases(listing: str) -> dict[str, str]:
    """`a as b, c as d` as {b: a, d: c}."""
    pairs = (item.split(" as ") for item in listing.split(",") if " as " in item)
    return {alias.strip(): name.strip() for name, alias in pairs}


@cache
def echarts_module() -> str:
    """The ECharts bundle as the text of an inline `<script type="module">`."""
    dist = _nicegui_dir() / "elements" / "echart" / "dist"
    entry = (dist / "index.js").read_text(encoding="utf-8")
    found = _ENTRY.search(entry)
    exported = _aliases(found.group("exports")) if found else {}
    if found is None or "echarts" not in exported:
        raise GraphwrightError(f"NiceGUI's ECharts entry module {dist / 'index.js'} changed shape")
    chunk_name = _aliases(found.group("names")).get(exported["echarts"])
    chunk = (dist / found.group("chunk")).read_text(encoding="utf-8")
    exports = re.findall(r"export\{([^}]*)\}", chunk)
    local = _aliases(exports[-1]).get(chunk_name) if exports else None
    if local is None:
        raise GraphwrightError(f"NiceGUI's ECharts chunk {found.group('chunk')} changed shape")
    if re.search(r"</script|<!--", chunk, re.IGNORECASE):
        raise GraphwrightError("NiceGUI's ECharts bundle cannot be inlined in a <script> element")
    return f"{_SOURCE_MAP.sub('', chunk)}\nglobalThis.echarts = {local};\n"
