"""What building one model request costs on the event loop, for the OpenAI provider: LangChain's
payload and the OpenAI SDK's walk of it (`async_maybe_transform`, run by every
`chat.completions.create`), with stock ChatOpenAI (the baseline) and with graphwright's, which
hands the messages and tools to the SDK as built (src/graphwright/llm_openai.py).

A conversation of N turns (a system prompt, then a question and a 400-character answer per turn,
then the new question) with 12 tools bound, as the chat offers: best of 5 per size.

Run: .venv/bin/python benchmarks/model_request_bench.py [--turns 5 50 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from openai._utils import async_maybe_transform
from openai.types.chat import completion_create_params

from graphwright.llm_openai import ChatOpenAISentAsBuilt

TOOLS = 12
REPEATS = 5


def tool(index: int) -> dict[str, Any]:
    properties = {f"p{i}": {"type": "string", "description": "x" * 60} for i in range(6)}
    return {
        "type": "function",
        "function": {
            "name": f"tool{index}",
            "description": "d" * 300,
            "parameters": {"type": "object", "properties": properties},
        },
    }


def conversation(turns: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("s" * 3000)]
    for turn in range(turns):
        messages += [HumanMessage(f"question {turn}"), AIMessage("a" * 400)]
    return [*messages, HumanMessage("the new question")]


async def request_seconds(model_class: type[ChatOpenAI], messages: list[BaseMessage]) -> float:
    """The best of REPEATS: the payload built, then walked as `create` walks it."""
    bound = model_class(model="x", api_key="k").bind_tools([tool(i) for i in range(TOOLS)])
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        payload = bound.bound._get_request_payload(messages, **bound.kwargs)  # type: ignore[attr-defined]
        payload["stream"] = True
        await async_maybe_transform(
            payload, completion_create_params.CompletionCreateParamsStreaming
        )
        best = min(best, time.perf_counter() - started)
    return best


async def main(turns: list[int]) -> None:
    print(f"{'turns':>6} {'stock ChatOpenAI ms':>20} {'graphwright ms':>15} {'ratio':>8}")
    for count in turns:
        messages = conversation(count)
        stock = await request_seconds(ChatOpenAI, messages)
        ours = await request_seconds(ChatOpenAISentAsBuilt, messages)
        print(f"{count:>6} {stock * 1000:>20.2f} {ours * 1000:>15.2f} {stock / ours:>7.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[5, 50, 200])
    asyncio.run(main(parser.parse_args().turns))
