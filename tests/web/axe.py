"""axe-core in the browser tests: inject `axe.min.js` (installed by `make axe` into the
git-ignored .axe-core/) and list the serious and critical violations on the page shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE_JS = Path(__file__).parents[2] / ".axe-core" / "node_modules" / "axe-core" / "axe.min.js"
SEVERE = ("serious", "critical")

_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']})
  .then(r => done(r.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + n.failureSummary)}))))
  .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


def axe_missing() -> str | None:
    return None if AXE_JS.is_file() else f"{AXE_JS} is missing (`make axe` installs it)"


def severe_violations(driver: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page the driver shows."""
    if not driver.execute_script("return typeof window.axe !== 'undefined';"):
        driver.execute_script(AXE_JS.read_text())
    driver.set_script_timeout(120)
    found = driver.execute_async_script(_RUN)
    return [v for v in found if v["impact"] in SEVERE]
