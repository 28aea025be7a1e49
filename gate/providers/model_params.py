"""The keys a model config may hold: the gate's own, and the request parameters each provider
kind documents. Anything else is refused at its line with a "did you mean" (`max_token: 300`
would otherwise be sent, ignored by the provider, and the run would measure a model with no
such limit). A parameter only some server takes (vLLM's `top_k`, Ollama's `options`,
llama.cpp's `cache_prompt`) goes under `extra_body:`, which is sent as it is. Pure.
"""

from __future__ import annotations

from gate.inputs.sourcemap import suggest

# The gate's own keys (gate.providers.prompts.ModelSettings's fields).
SETTINGS = frozenset(
    {"model", "temperature", "max_tokens", "system", "provider", "base_url", "api_key_env",
     "extra_body"}
)  # fmt: skip
# Chat completions' request parameters (platform.openai.com/docs/api-reference/chat/create).
OPENAI_PARAMS = frozenset(
    {
        "temperature", "max_tokens", "max_completion_tokens", "top_p", "frequency_penalty",
        "presence_penalty", "stop", "seed", "n", "logit_bias", "logprobs", "top_logprobs",
        "response_format", "tools", "tool_choice", "parallel_tool_calls", "functions",
        "function_call", "user", "reasoning_effort", "service_tier", "store", "metadata",
        "modalities", "prediction", "audio", "web_search_options", "verbosity",
        "prompt_cache_key", "safety_identifier",
    }
)  # fmt: skip
# The Messages API's (docs.anthropic.com/en/api/messages), and OpenAI's tool keys, which the
# gate converts (gate.providers.tool_formats).
ANTHROPIC_PARAMS = frozenset(
    {
        "temperature", "max_tokens", "top_p", "top_k", "stop_sequences", "metadata", "tools",
        "tool_choice", "thinking", "service_tier", "container", "mcp_servers", "functions",
        "function_call", "parallel_tool_calls",
    }
)  # fmt: skip
GATES_OWN = frozenset({"messages", "stream", "model_config"})  # prompts.RESERVED_PARAMS
PARAMS = {"openai": OPENAI_PARAMS, "anthropic": ANTHROPIC_PARAMS}
API = {"openai": "OpenAI's chat completions", "anthropic": "Anthropic's Messages API"}
PASS_THROUGH = (
    "a parameter only your server takes goes under `extra_body:` (sent as it is), e.g. "
    "`extra_body: {top_k: 40}`"
)


def unknown_key(name: str) -> str | None:
    """Why `name` is no key of any model config (None: it is one of some provider's)."""
    if name in SETTINGS or name in GATES_OWN or any(name in params for params in PARAMS.values()):
        return None  # the gate's own (`messages`, ...) are refused with their own reason
    vocabulary = SETTINGS | OPENAI_PARAMS | ANTHROPIC_PARAMS
    return (
        f"unknown key{suggest(name, vocabulary)}: no parameter of OpenAI's or Anthropic's chat "
        f"API; {PASS_THROUGH}"
    )


def foreign_param(name: str, kind: str) -> str | None:
    """Why `name`, another provider's parameter, cannot go to `kind` (None: it can)."""
    params = PARAMS.get(kind)
    if params is None or name in SETTINGS or name in GATES_OWN or name in params:
        return None
    return (
        f"{API[kind]} has no parameter `{name}`{suggest(name, params)}, and this side's "
        f"provider is {kind}: remove it, or {PASS_THROUGH}"
    )
