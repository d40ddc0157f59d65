"""Helpers shared by the artifact tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent.parent / "fixtures" / "artifacts"


def fixture(name: str) -> Any:
    """A recorded tool result (or other JSON) from tests/fixtures/artifacts."""
    return json.loads((FIXTURES / name).read_text())
