"""Which comparison a GitHub event asks for: all event branching lives here.

| event | base | head | comment on |
|---|---|---|---|
| `pull_request` (opened, synchronize, reopened, (un)labeled) | PR base sha | checkout | the PR |
| `pull_request_target` (same actions) | PR base sha | checkout | the PR |
| `merge_group` | the queue's base sha | checkout | nothing (job summary) |
| `push`, `workflow_dispatch` | input `base-ref`, else the parent commit | checkout | nothing |
| anything else | - | - | skipped, with the reason |

A pull request's labels come with it (the accept label turns a fail into a pass; the action
reads them again from the API at run time, since they may have changed since the event). A
label added or removed runs the whole evaluation again, never a skip: a skip would pass the
check.

Pure: the event's name and payload in, an `Activity` out; reading the payload file is the
caller's job (`load_event`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.errors import InputError

PR_EVENTS = ("pull_request", "pull_request_target")
PR_ACTIONS = ("opened", "synchronize", "reopened", "labeled", "unlabeled")
SUPPORTED = (*PR_EVENTS, "merge_group", "push", "workflow_dispatch")


class BaseSpec(BaseModel):
    """What to compare the head with: a commit, a ref to resolve (and fetch), or HEAD's parent."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["sha", "ref", "parent"]
    value: str | None = None

    def describe(self) -> str:
        return "the parent commit" if self.kind == "parent" else f"{self.value}"


class Activity(BaseModel):
    model_config = ConfigDict(frozen=True)

    event: str
    title: str = Field(description="for logs, e.g. `pull_request #2 (synchronize)`")
    base: BaseSpec | None = None
    head_sha: str | None = Field(None, description="the event's head commit (for links)")
    pr_number: int | None = Field(None, description="where the comment goes, if anywhere")
    skip_reason: str | None = None
    pr_code_checkout_required: bool = Field(
        False, description="pull_request_target: the default checkout is the base, not the PR"
    )
    labels: tuple[str, ...] = Field((), description="the PR's labels, as the event gave them")

    @property
    def skipped(self) -> bool:
        return self.skip_reason is not None


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore")


P = TypeVar("P", bound=_Payload)


class _Side(_Payload):
    sha: str = Field(min_length=1)
    ref: str = ""


class _Label(_Payload):
    name: str


class _PullRequest(_Payload):
    number: int
    base: _Side
    head: _Side
    labels: list[_Label] = Field(default_factory=list)


class PullRequestEvent(_Payload):
    action: str
    number: int
    pull_request: _PullRequest


class _MergeGroup(_Payload):
    head_sha: str = Field(min_length=1)
    base_sha: str = Field(min_length=1)
    head_ref: str = ""
    base_ref: str = ""


class MergeGroupEvent(_Payload):
    action: str = "checks_requested"
    merge_group: _MergeGroup


class PushEvent(_Payload):
    ref: str = ""
    after: str = ""
    deleted: bool = False


class DispatchEvent(_Payload):
    ref: str = ""


def load_event(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("the event payload file does not exist", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the event payload: {exc}", file=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"the event payload is not JSON: {exc.msg}", file=path, line=exc.lineno
        ) from None
    if not isinstance(data, dict):
        raise InputError("the event payload must be a JSON object", file=path)
    return data


def _parse(model: type[P], payload: dict[str, Any], source: str) -> P:
    try:
        return model.model_validate(payload)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or None
        raise InputError(
            f"unexpected event payload: {first['msg']}", file=source, key=key
        ) from None


def _pull_request(name: str, payload: dict[str, Any], source: str) -> Activity:
    event = _parse(PullRequestEvent, payload, source)
    pr = event.pull_request
    title = f"{name} #{pr.number} ({event.action})"
    if event.action not in PR_ACTIONS:
        return Activity(
            event=name,
            title=title,
            pr_number=pr.number,
            skip_reason=f"`{name}` action `{event.action}` is not evaluated "
            f"(only {', '.join(PR_ACTIONS)})",
        )
    return Activity(
        event=name,
        title=title,
        base=BaseSpec(kind="sha", value=pr.base.sha),
        head_sha=pr.head.sha,
        pr_number=pr.number,
        pr_code_checkout_required=name == "pull_request_target",
        labels=tuple(label.name for label in pr.labels),
    )


def _merge_group(payload: dict[str, Any], source: str) -> Activity:
    group = _parse(MergeGroupEvent, payload, source).merge_group
    return Activity(
        event="merge_group",
        title=f"merge_group {group.head_ref or group.head_sha}",
        base=BaseSpec(kind="sha", value=group.base_sha),
        head_sha=group.head_sha,
    )


def _branch_event(
    name: str, payload: dict[str, Any], source: str, base_ref: str | None
) -> Activity:
    base = BaseSpec(kind="ref", value=base_ref) if base_ref else BaseSpec(kind="parent")
    if name == "push":
        push = _parse(PushEvent, payload, source)
        if push.deleted:
            return Activity(
                event=name, title=f"push {push.ref}", skip_reason="the push deleted the ref"
            )
        return Activity(
            event=name, title=f"push {push.ref}", base=base, head_sha=push.after or None
        )
    dispatch = _parse(DispatchEvent, payload, source)
    return Activity(event=name, title=f"{name} {dispatch.ref}".strip(), base=base)


def activity_for(
    event_name: str, payload: dict[str, Any], *, base_ref: str | None = None, source: str = "event"
) -> Activity:
    """The comparison an event asks for. `base_ref` (input `base-ref`) applies to push and
    workflow_dispatch; pull requests and merge queues compare with the base GitHub names."""
    if event_name in PR_EVENTS:
        return _pull_request(event_name, payload, source)
    if event_name == "merge_group":
        return _merge_group(payload, source)
    if event_name in ("push", "workflow_dispatch"):
        return _branch_event(event_name, payload, source, base_ref)
    return Activity(
        event=event_name,
        title=event_name,
        skip_reason=f"event `{event_name}` is not evaluated (supported: {', '.join(SUPPORTED)})",
    )
