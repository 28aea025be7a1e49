"""Links into the repository and the run: a case's line, a commit, the workflow run.

Pure. Only plain http(s) addresses built from checked parts become links; anything else is
shown without one.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from gate.compare.models import CaseChange
from gate.inputs.templates import TemplateSet
from gate.render import values
from gate.render.markdown import Md
from gate.render.style import Style

REPOSITORY = re.compile(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+")
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]+")


class RenderContext(BaseModel):
    """Where the comparison is shown: links need the repository and the shas."""

    model_config = ConfigDict(frozen=True)

    suite: str = "default"
    repository: str | None = None
    server_url: str = "https://github.com"
    head_sha: str | None = None
    base_sha: str | None = None
    run_url: str | None = None
    report_hint: str | None = None
    templates: TemplateSet | None = None  # the user's comment templates, as text


def safe_url(url: str | None) -> Md | None:
    if not url or not URL.fullmatch(url):
        return None
    return Md(url.replace("(", "%28").replace(")", "%29"))


def _repo_base(ctx: RenderContext) -> str | None:
    server = safe_url(ctx.server_url.rstrip("/"))
    if server is None or not ctx.repository or not REPOSITORY.fullmatch(ctx.repository):
        return None
    return f"{server}/{ctx.repository}"


def case_url(case: CaseChange, ctx: RenderContext) -> str | None:
    """The case's line at the head sha (the base sha for removed cases), when known."""
    sha = ctx.head_sha if case.head is not None else ctx.base_sha
    base = _repo_base(ctx)
    if case.heldout or not case.file or base is None or not sha or not SHA.fullmatch(sha):
        return None
    anchor = f"#L{case.line}" if case.line > 0 else ""
    return f"{base}/blob/{sha}/{quote(case.file.lstrip('/'))}{anchor}"


def sha_link(sha: str | None, ctx: RenderContext, style: Style) -> Md:
    if not sha or not SHA.fullmatch(sha):
        return Md(values.DASH)
    base = _repo_base(ctx)
    label = style.code(sha[:7], 7)
    return style.link(label, f"{base}/commit/{sha}") if base else label
