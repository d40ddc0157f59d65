"""The model in one step: GRAPHWRIGHT_MODEL_BASE_URL and GRAPHWRIGHT_MODEL_API_KEY reach the
provider, and a missing package, key or endpoint is one line (at `serve` start, in the chat and
in the UI banner) while the server runs on with slash commands only."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from openai._utils import _transform as transform
from pydantic import SecretStr

from graphwright.llm import NO_MODEL, load_chat_model
from graphwright.settings import Settings
from tests.chat.openai_stub import ANSWER, OpenAIStub
from tests.conftest import free_port, serve_in_thread, wait_until_serving

PROVIDER_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY",
                      "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL", "OPENAI_API_VERSION")  # fmt: skip


@pytest.fixture(autouse=True)
def _no_provider_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[OpenAIStub, str]]:
    server = OpenAIStub(key="sk-local-secret")
    with serve_in_thread(server.app()) as url:
        yield server, url


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_base_url_and_key_reach_an_openai_compatible_server(stub: tuple[OpenAIStub, str]) -> None:
    server, url = stub
    setup = load_chat_model(
        settings(
            model="openai:qwen2.5-7b-instruct",
            model_base_url=f"{url}/v1",
            model_api_key=SecretStr("sk-local-secret"),
        )
    )
    assert setup.notice is None and setup.model is not None
    assert setup.model.invoke("ping").content == ANSWER
    assert server.seen[-1].path == "/v1/chat/completions"
    assert server.seen[-1].authorization == "Bearer sk-local-secret"
    assert server.seen[-1].model == "qwen2.5-7b-instruct"


def test_a_local_server_that_checks_no_key_needs_none(stub: tuple[OpenAIStub, str]) -> None:
    server, url = stub
    server.key = None
    try:
        setup = load_chat_model(settings(model="openai:local", model_base_url=f"{url}/v1"))
        assert setup.model is not None and setup.model.invoke("ping").content == ANSWER
    finally:
        server.key = "sk-local-secret"


def _long_conversation(turns: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("You answer questions about genes.")]
    for turn in range(turns):
        messages += [HumanMessage(f"how is TP53 regulated? ({turn})"), AIMessage("By MDM2.")]
    return [*messages, HumanMessage("and BRCA1?")]


def _tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"term": {"type": "string"}}}
    function = {"name": name, "description": f"{name} a term", "parameters": parameters}
    return {"type": "function", "function": function}


def _openai_model(url: str) -> BaseChatModel:
    key = SecretStr("sk-local-secret")
    setup = load_chat_model(
        settings(model="openai:local", model_base_url=f"{url}/v1", model_api_key=key)
    )
    assert setup.model is not None
    return setup.model


def test_the_provider_gets_the_messages_and_tools_as_langchain_built_them(
    stub: tuple[OpenAIStub, str],
) -> None:
    server, url = stub
    tools = [_tool("search"), _tool("expand")]
    reply = _openai_model(url).bind_tools(tools).invoke(_long_conversation(2))
    assert reply.content == ANSWER
    body = server.seen[-1].body
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("system", "You answer questions about genes."),
        ("user", "how is TP53 regulated? (0)"), ("assistant", "By MDM2."),
        ("user", "how is TP53 regulated? (1)"), ("assistant", "By MDM2."),
        ("user", "and BRCA1?"),
    ]  # fmt: skip
    assert body["tools"] == tools
    assert "extra_body" not in body and body["model"] == "local"


def test_a_long_conversation_is_not_walked_by_the_sdk_on_the_event_loop(
    stub: tuple[OpenAIStub, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenAI SDK's transform walked each message and tool against its typed dicts, on the
    event loop, changing nothing: milliseconds per model call, more as a conversation grows."""
    _server, url = stub
    walked: list[object] = []
    walk = transform._async_transform_recursive

    async def counted(data: object, **kwargs: Any) -> object:
        walked.append(data)
        return await walk(data, **kwargs)

    monkeypatch.setattr(transform, "_async_transform_recursive", counted)
    model = _openai_model(url).bind_tools([_tool(f"tool{i}") for i in range(12)])
    assert asyncio.run(model.ainvoke(_long_conversation(100))).content == ANSWER
    assert 0 < len(walked) < 50  # the request's other fields are still walked and checked


@pytest.mark.parametrize(
    ("spec", "extra", "says"),
    [
        ("openai:gpt-4o-mini", {}, "has no API key: set GRAPHWRIGHT_MODEL_API_KEY (or OPENAI_"),
        ("anthropic:claude-sonnet-4-5", {}, "set GRAPHWRIGHT_MODEL_API_KEY (or ANTHROPIC_API_KEY)"),
        ("azure_openai:my-deployment", {"model_api_key": SecretStr("k")},
         "has no endpoint: set GRAPHWRIGHT_MODEL_BASE_URL (or AZURE_OPENAI_ENDPOINT)"),
        ("azure_openai:my-deployment",
         {"model_api_key": SecretStr("k"), "model_base_url": "https://x.openai.azure.com"},
         "needs OPENAI_API_VERSION: set it, for example OPENAI_API_VERSION=2024-10-21"),
        ("ibm:granite-3", {}, "pip install"),  # langchain-ibm is not installed
        ("nope:x", {}, "write it as provider:model"),
    ],
)  # fmt: skip
def test_what_is_missing_is_one_line_that_says_how_to_set_it(
    spec: str, extra: dict[str, object], says: str
) -> None:
    setup = load_chat_model(settings(model=spec, **extra))
    assert setup.model is None
    assert setup.notice is not None and "\n" not in setup.notice
    assert setup.notice.startswith(f"GRAPHWRIGHT_MODEL={spec}")
    assert says in setup.notice
    assert "only slash commands work" in setup.notice


def test_no_model_says_how_to_set_one() -> None:
    setup = load_chat_model(settings(model=None))
    assert setup.model is None and setup.notice == NO_MODEL
    assert "GRAPHWRIGHT_MODEL=provider:model" in NO_MODEL and "docs/chat.md" in NO_MODEL


def test_serve_without_a_key_starts_says_one_line_and_runs_slash_commands(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES},
        "GRAPHWRIGHT_HOME": str(tmp_path / "home"),
        "GRAPHWRIGHT_OFFLINE": "true",
        "GRAPHWRIGHT_PORT": str(port),
        "GRAPHWRIGHT_MODEL": "openai:gpt-4o-mini",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "graphwright", "serve"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, server)
        token = subprocess.run(
            [sys.executable, "-m", "graphwright", "token", "create"],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.splitlines()[-1]  # fmt: skip
        answer = httpx.post(
            f"{base}/api/chat",
            headers={"Authorization": f"Bearer {token}"},
            json={"message": "/kg.resolveName TP53\nhow is TP53 regulated?", "stream": False},
            timeout=120,
        ).json()["data"]
        assert "NCBIGene:7157" in answer["content"] or "HGNC" in answer["content"]
        assert "GRAPHWRIGHT_MODEL_API_KEY" in answer["content"]  # the plain line is answered
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=60)
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if "GRAPHWRIGHT_MODEL_API_KEY" in line]
    assert len(lines) == 1, output
    assert "GRAPHWRIGHT_MODEL=openai:gpt-4o-mini has no API key" in lines[0]
