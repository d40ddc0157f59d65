"""The UI banner says what the model lacks and how to set it, in the service's one line."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import Simulated


@pytest.fixture
def settings_overrides(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return {"model": "openai:gpt-4o-mini"}


async def test_a_model_without_its_key_shows_what_to_set(simulated: Simulated) -> None:
    notice = simulated.app.state.chat_service.model_notice
    assert notice is not None and "GRAPHWRIGHT_MODEL_API_KEY" in notice
    await simulated.sign_in(label="ada")
    user = simulated.user
    user.find(marker="new-title").type("First look")
    user.find(marker="create").click()
    await user.should_see(marker="message-input", retries=20)
    await user.should_see(notice)
