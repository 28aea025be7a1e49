"""Where each provider kind sends its requests, with which auth headers, from config + environ."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from gate.errors import InputError
from gate.providers.secrets import Secrets, expand_headers, redact_url
from gate.providers.transport import Endpoint

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
# Public endpoints always need a key; a local vLLM, Ollama or llama.cpp server usually does not.
_KEYED_HOSTS = ("api.openai.com", "api.anthropic.com")


def join_path(base: str, suffix: str) -> str:
    """Append a path to a base URL, keeping its query (Azure's `?api-version=`)."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if not path.endswith(suffix):
        path = f"{path}/{suffix}"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _check_url(url: str, key: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) URL: {redact_url(url)!r}", key=key)


def _api_key(
    environ: Mapping[str, str], name: str, url: str, key: str
) -> tuple[str | None, Secrets]:
    value = environ.get(name) or None
    host = urlsplit(url).hostname
    if value is None and host in _KEYED_HOSTS:
        raise InputError(
            f"the API key for {host} is read from the environment variable {name}, which is "
            f"not set: set it (a workflow passes it from a secret: `env: {name}: "
            f"${{{{ secrets.{name} }}}}`), or name the variable that holds the key with "
            "`api_key_env`",
            key=key,
        )
    return value, Secrets([value] if value else [])


def _url_from(base_url: str | None, env_name: str, key: str, name: str = "base_url") -> str:
    """Where a dead endpoint's URL is fixed: gate.yml's (or the model config's) key, or the
    environment variable it came from."""
    if base_url is None:
        return f"${env_name}"
    return f"`{name}`" if key == "system" else f"`{key}.{name}`"


def openai_endpoint(
    base_url: str | None, api_key_env: str | None, environ: Mapping[str, str], key: str
) -> Endpoint:
    base = base_url or environ.get("OPENAI_BASE_URL") or OPENAI_URL
    _check_url(base, f"{key}.base_url")
    url = join_path(base, "chat/completions")
    name = api_key_env or "OPENAI_API_KEY"
    api_key, secrets = _api_key(environ, name, url, f"{key}.api_key_env")
    host = urlsplit(url).hostname or ""
    azure = host.endswith(".azure.com")
    headers: dict[str, str] = {}
    written: dict[str, str] = {}
    if api_key:
        name_ref = f"${{{name}}}"
        headers = {"api-key": api_key} if azure else {"Authorization": f"Bearer {api_key}"}
        written = {"api-key": name_ref} if azure else {"Authorization": f"Bearer {name_ref}"}
    provider = "openai" if host == "api.openai.com" else "azure" if azure else "openai-compatible"
    url_from = _url_from(base_url, "OPENAI_BASE_URL", key)
    return _endpoint(provider, url, (headers, written), secrets, url_from, name)


def anthropic_endpoint(
    base_url: str | None, api_key_env: str | None, environ: Mapping[str, str], key: str
) -> Endpoint:
    base = base_url or environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
    _check_url(base, f"{key}.base_url")
    on_v1 = urlsplit(base).path.rstrip("/").endswith("/v1")
    url = join_path(base, "messages" if on_v1 else "v1/messages")
    name = api_key_env or "ANTHROPIC_API_KEY"
    api_key, secrets = _api_key(environ, name, url, f"{key}.api_key_env")
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    written = dict(headers)
    if api_key:
        headers["x-api-key"] = api_key
        written["x-api-key"] = f"${{{name}}}"
    url_from = _url_from(base_url, "ANTHROPIC_BASE_URL", key)
    return _endpoint("anthropic", url, (headers, written), secrets, url_from, name)


def service_endpoint(
    url: str, headers: Mapping[str, str], environ: Mapping[str, str], key: str
) -> Endpoint:
    _check_url(url, f"{key}.url")
    resolved, secrets = expand_headers(headers, environ, f"{key}.headers")
    url_from = _url_from(url, "", key, "url")
    return _endpoint("http", url, (resolved, dict(headers)), secrets, url_from, None)


def _endpoint(
    provider: str,
    url: str,
    headers: tuple[dict[str, str], dict[str, str]],
    secrets: Secrets,
    url_from: str,
    key_env: str | None,
) -> Endpoint:
    """`headers`: as sent (secrets filled in), and as the config wrote them."""
    sent, written = headers
    return Endpoint(
        provider=provider,
        url=url,
        display_url=redact_url(url),
        headers=sent,
        secrets=secrets,
        url_from=url_from,
        key_env=key_env,
        written_headers=written,
    )
