"""An OpenAI-compatible chat endpoint, as vLLM, LM Studio and Ollama serve one, in the shape of
OpenAI's API reference: it answers every chat completion with one fixed line and records the
requests it got (their path, bearer key, model and body), so tests see what the provider was
given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

ANSWER = "pong"


@dataclass
class Seen:
    path: str
    authorization: str | None
    model: str
    body: dict[str, Any]


@dataclass
class OpenAIStub:
    key: str | None = None  # the key it asks for; None: any
    seen: list[Seen] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> JSONResponse:
            body = await request.json()
            authorization = request.headers.get("authorization")
            self.seen.append(Seen(request.url.path, authorization, body["model"], body))
            if self.key is not None and authorization != f"Bearer {self.key}":
                error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
                return JSONResponse({"error": error}, status_code=401)
            return JSONResponse(_completion(body["model"]))

        return app


def _completion(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": ANSWER},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
