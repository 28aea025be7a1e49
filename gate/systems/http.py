"""`http` kind: the user's own service. POST the case input (with `id`) as JSON, read JSON back.

The answer is an object carrying `text`, and optionally `usage` and `model` (priced from the
`prices` table) and anything else the checks may read. Header values may use `${ENV_VAR}`; those
values are secrets. Answers are cached only with `cache: true`, since the service's code is not
part of the request.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gate.errors import SystemCallError
from gate.inputs.config import HttpSystem
from gate.providers.endpoints import service_endpoint
from gate.providers.wire_formats import parse_service_reply
from gate.report.output import SystemOutput, steps_from
from gate.systems.base import SystemEnv, SystemRequest
from gate.systems.chat import client_for, to_output


class HttpServiceSystem:
    kind = "http"

    def __init__(self, config: HttpSystem, env: SystemEnv) -> None:
        self.config = config
        self.env = env
        endpoint = service_endpoint(config.url, config.headers, env.environ, "system")
        self.client = client_for(endpoint, config, env)

    def call(self, request: SystemRequest) -> SystemOutput:
        reply = self.client.post(
            request.input,
            parse_service_reply,
            repeat=request.repeat,
            deadline=time.monotonic() + request.timeout_s,
            cache=self.config.cache,
        )
        output = to_output(reply, self.env, None)
        if "trajectory" not in output.data:
            return output
        data = dict(output.data)
        try:
            steps = steps_from(data.pop("trajectory"), where="the service")
        except TypeError as exc:
            raise SystemCallError(str(exc)) from None
        return output.model_copy(update={"data": data, "trajectory": steps})

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "provider": "http",
            "url": self.client.endpoint.display_url,
            "cache": self.config.cache,
        }

    def files(self) -> list[Path]:
        return []

    def close(self) -> None:
        self.client.close()
