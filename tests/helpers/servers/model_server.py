"""A model provider on 127.0.0.1 for tests and benchmarks: real HTTP, deterministic answers.

Endpoints (one `ThreadingHTTPServer`, random port):
- `POST /v1/chat/completions`: OpenAI-compatible chat completions, with `usage`;
- `POST /v1/messages`: the Anthropic Messages API, with `usage`;
- `POST /service`: a plain JSON service (the `http` kind): `{"text": ..., "usage": ...}` back.

The built-in model is not a language model: it answers from the request, so checks can pass or
fail for a reason. It echoes the last user message after `[<model>] `, in upper case when the
system prompt says `UPPERCASE`. Tests may pass their own `responder`; one may answer with an
`Answer` (text and tool calls). `tool_model` calls tools as the user message says: a line
`CALL name {json arguments}` is a call of that tool, when the request offers it.

Tools are checked in each vendor's format, as the real APIs do: OpenAI's `tools` are
`[{type: function, function: {name, parameters}}]`, its `tool_choice` `auto | required | none |
{type: function, function: {name}}`; Anthropic's are `[{name, description, input_schema}]` and
`{type: auto | any | tool | none, name}`. Anything else is a 400, so a test that gets an answer
knows the tools arrived in the right shape (and the log holds the bodies to look at).

Faults are injected per request, deterministically: the fate of the n-th arrival of a given
request body is drawn from a generator seeded with (seed, body, n), so the same run sees the
same faults whatever the thread timing. `script()` queues exact responses instead, and
`max_in_flight` is a real rate limit: requests beyond that many at once get a 429. Every
request is counted and logged (path, headers, body); `peak_in_flight` shows the concurrency the
server actually saw.

`agent_model` is a tool-calling agent scripted by its prompt, per request: it reads lines
`PLAN n: tool {json arguments}` (one call per step; `&&` joins calls made in one step) and
`SAY n: text` from the system prompt and the user messages, and in user turn n makes the next
call of turn n's plan that has no result yet, or, when all have one, says turn n's text
(`$RESULTS` in it: the results of the turn, `; `-joined). As the simulated user (a system
prompt that says "You play a user") it says its persona's `SAYS:` lines, each once, then
`###STOP###`. So a prompt change that drops a PLAN line skips a step, one that adds lines takes
more, and the run is the same every time (cacheable).

With `spec_check=True` every request is also checked against the vendor's own request
description and conversation rules (`model_specs`): a request either API would refuse gets the
400 it would get and lands in `violations`, which tests assert to be empty.

Run alone: `python tests/helpers/servers/model_server.py --port 8400 --latency 0.05` (`--tools`
answers as `tool_model`, `--agent` as `agent_model`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:
    from helpers.servers.model_specs import anthropic_violations, openai_violations
except ImportError:  # run alone, from its own folder
    from model_specs import anthropic_violations, openai_violations  # type: ignore[no-redef]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
SERVICE_PATH = "/service"


@dataclass(frozen=True)
class ChatRequest:
    """What the built-in model and responders see, whatever the wire format."""

    model: str
    system: str
    user: str
    messages: list[dict[str, str]]
    params: dict[str, Any]
    headers: dict[str, str]
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> its JSON Schema
    # the conversation in one shape whatever the vendor: {role: system|user|assistant|tool,
    # content}; a tool result is a `tool` entry whatever message carried it
    turns: list[dict[str, Any]] = field(default_factory=list)

    @property
    def user_turn(self) -> int:
        """Which user turn this request answers: user messages (not tool results) so far."""
        return sum(1 for t in self.turns if t["role"] == "user")

    @property
    def turn_results(self) -> list[str]:
        """The tool results received since the last user message."""
        results: list[str] = []
        for entry in self.turns:
            if entry["role"] == "user":
                results = []
            elif entry["role"] == "tool":
                results.append(entry["content"])
        return results


@dataclass(frozen=True)
class Answer:
    """A structured answer: text and tool calls `(name, arguments)`; arguments given as a
    string are sent as they are (OpenAI), to fake arguments that are not JSON."""

    text: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    legacy_function_call: bool = False  # OpenAI's deprecated `function_call` message field


Responder = Callable[[ChatRequest], "str | Answer"]
ServiceResponder = Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]


def echo_model(request: ChatRequest) -> str:
    text = f"[{request.model}] {request.user}"
    return text.upper() if "UPPERCASE" in request.system else text


def tool_model(request: ChatRequest) -> Answer:
    """`CALL name {json}` lines call offered tools; the other lines are the answer's text."""
    calls: list[tuple[str, Any]] = []
    text: list[str] = []
    for line in request.user.splitlines():
        if line.startswith("CALL "):
            name, _, arguments = line.removeprefix("CALL ").partition(" ")
            if name in request.tools:
                calls.append((name, json.loads(arguments) if arguments.strip() else {}))
                continue
            line = f"(no tool {name})"
        text.append(line)
    return Answer(text="\n".join(text).strip(), tool_calls=calls)


def _plan(request: ChatRequest) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    plans: dict[int, list[str]] = {}
    says: dict[int, list[str]] = {}
    texts = [request.system] + [t["content"] for t in request.turns if t["role"] == "user"]
    for text in texts:
        for line in text.splitlines():
            for keyword, into in (("PLAN", plans), ("SAY", says)):
                head, colon, rest = line.strip().partition(":")
                word, _, number = head.partition(" ")
                if colon and word == keyword and number.strip().isdigit():
                    into.setdefault(int(number), []).append(rest.strip())
    return plans, says


def _step_calls(step: str) -> list[tuple[str, Any]]:
    calls = []
    for part in step.split("&&"):
        name, _, arguments = part.strip().partition(" ")
        calls.append((name, json.loads(arguments) if arguments.strip() else {}))
    return calls


def simulated_user(request: ChatRequest) -> str:
    """The persona's `SAYS:` lines, each once, in order, then the stop marker."""
    lines = [
        line.split("SAYS:", 1)[1].strip() for line in request.system.splitlines() if "SAYS:" in line
    ]
    left = [said for said in lines if f"USER: {said}" not in request.user]
    return left[0] if left else "###STOP###"


def agent_model(request: ChatRequest) -> Answer:
    """A tool-calling agent that follows the PLAN and SAY lines of its prompt (module doc)."""
    if "You play a user" in request.system:
        return Answer(text=simulated_user(request))
    plans, says = _plan(request)
    turn = request.user_turn
    done = len(request.turn_results)
    steps = plans.get(turn, [])
    made = 0
    for step in steps:
        calls = _step_calls(step)
        if made + len(calls) > done:
            offered = [(n, a) for n, a in calls if n in request.tools]
            if offered:
                return Answer(tool_calls=offered)
        made += len(calls)
    text = " ".join(says.get(turn, [])) or f"[{request.model}] {request.user}"
    return Answer(text=text.replace("$RESULTS", "; ".join(request.turn_results)))


def echo_service(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    shown = {k: v for k, v in body.items() if k != "id"}
    text = " ".join(f"{k}={v}" for k, v in sorted(shown.items()))
    return {
        "text": f"service: {text}",
        "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 2},
        "model": "service-v1",
        "case": body.get("id"),
    }


def words(text: str) -> int:
    return len(text.split())


@dataclass
class Faults:
    """Fractions of requests that fail; the rest are answered normally."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_hang: float = 0.0
    retry_after: str | None = "0"  # the Retry-After header of 429 answers (None: no header)
    hang_s: float = 30.0  # a hang sleeps this long (or until the server stops), then drops


@dataclass
class Scripted:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Logged:
    path: str
    headers: dict[str, str]
    body: Any
    outcome: str


class ModelServer:
    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        faults: Faults | None = None,
        seed: int = 0,
        responder: Responder = echo_model,
        service: ServiceResponder = echo_service,
        api_key: str | None = None,
        max_in_flight: int | None = None,
        keep_log: bool = True,
        spec_check: bool = False,
    ) -> None:
        self.latency_s = latency_s
        self.faults = faults or Faults()
        self.seed = seed
        self.responder = responder
        self.service = service
        self.api_key = api_key
        self.max_in_flight = max_in_flight  # a real rate limit: more at once get a 429
        self.keep_log = keep_log
        self.spec_check = spec_check  # refuse what the vendor's API would refuse (model_specs)
        self.violations: list[str] = []
        self.counts: Counter[str] = Counter()
        self.log: list[Logged] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.busy_s = 0.0  # the server's own time: from a request read to its answer written
        self._arrivals: Counter[str] = Counter()
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, port: int = 0) -> ModelServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", port), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.request_queue_size = 256
        httpd.allow_reuse_address = True
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def service_url(self) -> str:
        return f"{self.url}{SERVICE_PATH}"

    # --- control ---------------------------------------------------------------------------

    def script(self, *responses: Scripted) -> None:
        """Answer the next requests with these responses, in order, before anything else."""
        with self._lock:
            self._script.extend(responses)

    def reset_counts(self) -> None:
        with self._lock:
            self.counts.clear()
            self.log.clear()
            self.peak_in_flight = 0

    @property
    def requests(self) -> int:
        """Requests that reached a model endpoint (every attempt counts)."""
        return self.counts["requests"]

    @property
    def connections(self) -> int:
        """TCP connections accepted: a pooled client opens few and reuses them."""
        return self.counts["connections"]

    # --- decisions (called by the handler) -------------------------------------------------

    def _enter(self, path: str, headers: dict[str, str], body: Any) -> tuple[Logged, bool]:
        """Log the request; the flag says it is over the server's concurrency limit."""
        entry = Logged(path, headers, body, "pending")
        with self._lock:
            self.counts["requests"] += 1
            self.counts[path] += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            if self.keep_log:
                self.log.append(entry)
            over = self.max_in_flight is not None and self.in_flight > self.max_in_flight
        return entry, over

    def _outcome(self, entry: Logged, outcome: str) -> None:
        """Counted before the answer is written, so a client never sees it uncounted."""
        with self._lock:
            entry.outcome = outcome
            self.counts[outcome] += 1

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _fate(self, raw: bytes) -> str | Scripted:
        with self._lock:
            if self._script:
                return self._script.popleft()
            digest = hashlib.sha256(raw).hexdigest()
            arrival = self._arrivals[digest]
            self._arrivals[digest] += 1
        draw = random.Random(f"{self.seed}:{digest}:{arrival}").random()
        f = self.faults
        if draw < f.rate_429:
            return "429"
        if draw < f.rate_429 + f.rate_500:
            return "500"
        if draw < f.rate_429 + f.rate_500 + f.rate_hang:
            return "hang"
        return "ok"


class _Handler(BaseHTTPRequestHandler):
    server_state: ModelServer
    protocol_version = "HTTP/1.1"
    # Headers and body are separate writes: with Nagle on, each answer waits ~40 ms for an ACK.
    disable_nagle_algorithm = True
    _entry: Logged

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        with self.server_state._lock:
            self.server_state.counts["connections"] += 1

    def do_POST(self) -> None:
        started = time.perf_counter()
        try:
            self._post()
        finally:
            with self.server_state._lock:
                self.server_state.busy_s += time.perf_counter() - started

    def _post(self) -> None:
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._entry, over_limit = state._enter(path, headers, body)
        try:
            if over_limit:
                limited = {"error": {"message": "Too many concurrent requests"}}
                self._send(429, limited, _limit_headers(state))
                return
            self._serve(state, path, raw, body, headers)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._send(400, {"error": {"message": f"bad request: {exc!r}"}})
        finally:
            state._leave()

    def _serve(
        self, state: ModelServer, path: str, raw: bytes, body: Any, headers: dict[str, str]
    ) -> None:
        if path not in (OPENAI_PATH, ANTHROPIC_PATH, SERVICE_PATH):
            self._send(404, {"error": {"message": f"no route {path}"}})
            return
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        if state.latency_s:
            time.sleep(state.latency_s)
        fate = state._fate(raw)
        if isinstance(fate, Scripted):
            self._send(fate.status, fate.body, fate.headers)
        elif fate == "hang":
            state._outcome(self._entry, "hang")
            state._stop.wait(state.faults.hang_s)
            self.close_connection = True
        elif fate == "429":
            self._send(429, {"error": {"message": "Rate limit reached"}}, _limit_headers(state))
        elif fate == "500":
            self._send(500, {"error": {"message": "The server had an error"}})
        elif (denied := _check_key(state, path, headers)) is not None:
            self._send(401, {"error": {"message": denied}})
        elif refused := _spec_violations(state, path, body):
            self._send(400, {"error": {"type": "invalid_request_error", "message": refused}})
        elif path == SERVICE_PATH:
            self._send(200, state.service(body, headers))
        elif path == ANTHROPIC_PATH:
            self._send(200, _anthropic_answer(state, body, headers))
        else:
            self._send(200, _openai_answer(state, body, headers))

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.server_state._outcome(self._entry, str(status))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _limit_headers(state: ModelServer) -> dict[str, str]:
    if state.faults.retry_after is None:
        return {}
    reset = datetime.now(UTC) + timedelta(seconds=float(state.faults.retry_after))
    return {
        "Retry-After": state.faults.retry_after,
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": f"{float(state.faults.retry_after):g}s",
        "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
    }


def _check_key(state: ModelServer, path: str, headers: dict[str, str]) -> str | None:
    """None when authorised. The refusal echoes what it got, as careless servers do."""
    if state.api_key is None or path == SERVICE_PATH:
        return None
    given = headers.get("x-api-key") if path == ANTHROPIC_PATH else headers.get("authorization")
    expected = state.api_key if path == ANTHROPIC_PATH else f"Bearer {state.api_key}"
    return None if given == expected else f"Incorrect API key provided: {given}"


def _spec_violations(state: ModelServer, path: str, body: Any) -> str:
    """Why the vendor's API would refuse this request ("" when it would not, or unchecked)."""
    if not state.spec_check or path == SERVICE_PATH:
        return ""
    found = anthropic_violations(body) if path == ANTHROPIC_PATH else openai_violations(body)
    if found:
        with state._lock:
            state.violations.extend(found)
    return "; ".join(found)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _openai_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            raise ValueError(f"tools: not an OpenAI function tool: {tool}")
        tools[tool["function"]["name"]] = tool["function"].get("parameters") or {}
    for function in body.get("functions") or []:
        tools[function["name"]] = function.get("parameters") or {}
    choice = body.get("tool_choice")
    named = isinstance(choice, dict) and choice.get("type") == "function"
    if choice not in (None, "auto", "required", "none") and not (
        named and "name" in choice.get("function", {})
    ):
        raise ValueError(f"tool_choice: not an OpenAI tool choice: {choice}")
    return tools


def _anthropic_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if "function" in tool or "input_schema" not in tool or not isinstance(tool["name"], str):
            raise ValueError(f"tools: not an Anthropic tool: {tool}")
        tools[tool["name"]] = tool["input_schema"]
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in (
            "auto",
            "any",
            "tool",
            "none",
        ):
            raise ValueError(f"tool_choice: not an Anthropic tool choice: {choice}")
        if choice["type"] == "tool" and choice.get("name") not in tools:
            raise ValueError(f"tool_choice: no tool named {choice.get('name')}")
    return tools


def _conversation(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages in one shape (`ChatRequest.turns`): a tool's result is a `tool` entry,
    whether an OpenAI `tool` message or a block of an Anthropic user message carried it."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role in ("tool", "function"):
            turns.append({"role": "tool", "content": _text_of(content or "")})
            continue
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            turns.append({"role": "tool", "content": _text_of(block.get("content") or "")})
        if results:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if text:
                turns.append({"role": "user", "content": text})
            continue
        shown = "system" if role == "developer" else role
        turns.append({"role": shown, "content": _text_of(content or "")})
    return turns


def _chat_request(
    body: dict[str, Any], system: str, headers: dict[str, str], tools: dict[str, dict[str, Any]]
) -> ChatRequest:
    turns = _conversation(body["messages"])
    messages = [{"role": t["role"], "content": t["content"]} for t in turns]
    users = [m["content"] for m in messages if m["role"] == "user"]
    params = {k: v for k, v in body.items() if k not in ("model", "messages", "system")}
    return ChatRequest(
        model=body["model"],
        system=system,
        user=users[-1] if users else "",
        messages=messages,
        params=params,
        headers=headers,
        tools=tools,
        turns=turns,
    )


def _step(request: ChatRequest) -> str:
    """Tool call ids unique in the conversation: the first answer's are `call_0`, `call_1`."""
    made = sum(1 for t in request.turns if t["role"] == "assistant")
    return f"{made}_" if made else ""


def _answer(state: ModelServer, request: ChatRequest) -> Answer:
    answer = state.responder(request)
    return Answer(text=answer) if isinstance(answer, str) else answer


def _openai_message(answer: Answer, step: str = "") -> tuple[dict[str, Any], str]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if not answer.tool_calls:
        return {**message, "content": answer.text}, "stop"
    functions = [
        {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}
        for name, args in answer.tool_calls
    ]
    if answer.legacy_function_call:
        return {**message, "function_call": functions[0]}, "function_call"
    message["tool_calls"] = [
        {"id": f"call_{step}{i}", "type": "function", "function": f}
        for i, f in enumerate(functions)
    ]
    return message, "tool_calls"


def _openai_answer(state: ModelServer, body: dict[str, Any], headers: dict[str, str]) -> Any:
    system = "\n".join(
        _text_of(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer")
    )
    request = _chat_request(body, system, headers, _openai_tools(body))
    answer = _answer(state, request)
    text = answer.text
    message, finish = _openai_message(answer, _step(request))
    prompt_tokens = sum(words(m["content"]) for m in request.messages)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": words(text),
            "total_tokens": prompt_tokens + words(text),
        },
    }


def _anthropic_answer(state: ModelServer, body: dict[str, Any], headers: dict[str, str]) -> Any:
    if "max_tokens" not in body:
        raise KeyError("max_tokens is required")
    if any(m["role"] == "system" for m in body["messages"]):
        raise ValueError("system messages go in the top-level `system` field")
    request = _chat_request(body, _text_of(body.get("system", "")), headers, _anthropic_tools(body))
    answer = _answer(state, request)
    text = answer.text
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{_step(request)}{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(answer.tool_calls)
    ]
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content or [{"type": "text", "text": ""}],
        "stop_reason": "tool_use" if answer.tool_calls else "end_turn",
        "usage": {
            "input_tokens": words(request.system)
            + sum(words(m["content"]) for m in request.messages),
            "output_tokens": words(text),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8400)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--rate-500", type=float, default=0.0)
    parser.add_argument("--rate-hang", type=float, default=0.0)
    parser.add_argument(
        "--tools",
        action="store_true",
        help="answer as tool_model: a user line `CALL name {json}` calls that offered tool",
    )
    parser.add_argument(
        "--agent",
        action="store_true",
        help="answer as agent_model: the prompt's `PLAN n:` and `SAY n:` lines script it",
    )
    args = parser.parse_args()
    faults = Faults(rate_429=args.rate_429, rate_500=args.rate_500, rate_hang=args.rate_hang)
    responder: Responder = agent_model if args.agent else tool_model if args.tools else echo_model
    server = ModelServer(
        latency_s=args.latency, faults=faults, responder=responder, keep_log=False
    ).start(args.port)
    print(f"model server on {server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
