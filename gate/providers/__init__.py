"""How the gate talks to model providers over HTTP. Below `systems` (whose `chat` kinds and the
judge use it); never imports them.

- `transport`: one pooled `requests.Session` per provider, retried by `gate.retry`'s loop, and
  the shared `throttle` that slows the whole run down when the provider answers 429;
- `backoff`: what a provider asks us to wait (its rate-limit reset headers) and which answers
  are worth retrying (pure);
- `cache`: the on-disk response cache keyed by a hash of the exact request;
- `wire_formats`: the OpenAI chat-completions and Anthropic Messages wire formats (pure);
- `client`: the cache in front of the transport, for one endpoint;
- `endpoints`: URLs and auth headers per kind, from config and environment;
- `prompts`: `model_config` files and sandboxed jinja2 prompt templates from a checkout;
- `traffic`: counts of requests, retries and 429s per client (progress line, summary);
- `pricing`: token usage to USD; `secrets`: keeping keys out of everything we write.
"""
