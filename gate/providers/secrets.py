"""Keep secrets out of everything the gate writes: reports, cache, logs and error messages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from gate.errors import InputError

MASK = "***"
# Shorter values are not scrubbed: replacing e.g. "1" everywhere would destroy the text.
MIN_SECRET_LEN = 4
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SENSITIVE_NAME = re.compile(r"auth|key|token|secret|passw|cookie|sig|credential", re.IGNORECASE)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
# The gate's own credentials and the runner's: never handed to the code under test.
GATE_CREDENTIALS = re.compile(r"^(INPUT_.*|ACTIONS_.*|GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN)$")


class Secrets:
    """The secret values of one provider; `scrub` masks every occurrence of them in a text."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: list[str] = []
        self.add(*values)

    def add(self, *values: str) -> None:
        for value in values:
            if len(value) < MIN_SECRET_LEN:
                continue
            # also the forms a JSON body may carry it in ("a/b" can be sent as "a\/b")
            for form in (value, json.dumps(value)[1:-1], value.replace("/", "\\/")):
                if form not in self._values:
                    self._values.append(form)
        self._values.sort(key=len, reverse=True)  # mask "abcd1234" before "abcd"

    def scrub(self, text: str) -> str:
        """Mask every known secret; safe for answers (nothing else in them changes)."""
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def scrub_message(self, text: str) -> str:
        """For error messages: known secrets and anything shaped like a bearer credential."""
        return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", self.scrub(text))

    def __bool__(self) -> bool:
        return bool(self._values)


def without_gate_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the gate's credentials (the system's own keys stay)."""
    return {k: v for k, v in environ.items() if not GATE_CREDENTIALS.match(k)}


def is_sensitive_name(name: str) -> bool:
    return bool(_SENSITIVE_NAME.search(name))


def expand_headers(
    headers: Mapping[str, str], environ: Mapping[str, str], key: str
) -> tuple[dict[str, str], Secrets]:
    """Resolve `${VAR}` in header values; expanded and auth-like values become secrets."""
    secrets = Secrets()
    resolved: dict[str, str] = {}
    for name, template in headers.items():

        def lookup(match: re.Match[str], header: str = name) -> str:
            var = match.group(1)
            if var not in environ:
                raise InputError(
                    f"environment variable {var} is not set (used by header {header!r})",
                    key=f"{key}.{header}",
                )
            secrets.add(environ[var])
            return environ[var]

        value = _ENV_REF.sub(lookup, template)
        if is_sensitive_name(name) or value != template:
            secrets.add(value)
            # `Bearer <token>`: the token alone must be masked too.
            secrets.add(*value.split()[1:])
        resolved[name] = value
    return resolved, secrets


def redact_url(url: str) -> str:
    """The URL without user info and with sensitive query values masked (for reports, keys)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    query = urlencode(
        [(k, MASK if is_sensitive_name(k) else v) for k, v in parse_qsl(parts.query)],
        safe="*",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
