"""Event branching on the real webhook payloads (@octokit/webhooks-examples)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.errors import InputError
from gate.github.events import BaseSpec, activity_for, load_event

WEBHOOKS = Path(__file__).parent / "fixtures" / "webhooks"


def payload(name: str) -> dict[str, Any]:
    return json.loads((WEBHOOKS / f"{name}.json").read_text())


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened"])
def test_pull_request_compares_with_its_base(action: str) -> None:
    data = payload(f"pull_request.{action}")
    activity = activity_for("pull_request", data)
    pr = data["pull_request"]
    assert activity.base == BaseSpec(kind="sha", value=pr["base"]["sha"])
    assert activity.head_sha == pr["head"]["sha"]
    assert activity.pr_number == pr["number"] and not activity.skipped
    assert activity.title == f"pull_request #{pr['number']} ({action})"
    assert not activity.pr_code_checkout_required


def test_pull_request_target_warns_about_its_checkout() -> None:
    activity = activity_for("pull_request_target", payload("pull_request.opened"))
    assert activity.pr_code_checkout_required and activity.pr_number is not None


def test_other_pull_request_actions_are_skipped_with_the_reason() -> None:
    activity = activity_for("pull_request", payload("pull_request.closed"))
    assert activity.skipped and "`closed` is not evaluated" in (activity.skip_reason or "")


def test_merge_group_uses_the_queue_base_and_posts_no_comment() -> None:
    data = payload("merge_group.checks_requested")
    activity = activity_for("merge_group", data)
    assert activity.base == BaseSpec(kind="sha", value=data["merge_group"]["base_sha"])
    assert activity.head_sha == data["merge_group"]["head_sha"]
    assert activity.pr_number is None


@pytest.mark.parametrize("event", ["push", "workflow_dispatch"])
def test_push_and_dispatch_use_base_ref_or_the_parent(event: str) -> None:
    data = payload(event)
    assert activity_for(event, data).base == BaseSpec(kind="parent")
    with_ref = activity_for(event, data, base_ref="main")
    assert with_ref.base == BaseSpec(kind="ref", value="main") and with_ref.pr_number is None


def test_pull_requests_ignore_base_ref() -> None:
    data = payload("pull_request.opened")
    activity = activity_for("pull_request", data, base_ref="elsewhere")
    assert activity.base == BaseSpec(kind="sha", value=data["pull_request"]["base"]["sha"])


def test_deleted_branch_push_is_skipped() -> None:
    activity = activity_for("push", {**payload("push"), "deleted": True})
    assert activity.skipped and "deleted" in (activity.skip_reason or "")


@pytest.mark.parametrize("event", ["issue_comment", "schedule", "release"])
def test_other_events_are_a_clear_skip(event: str) -> None:
    activity = activity_for(event, payload("issue_comment.created"))
    assert activity.skipped and f"event `{event}` is not evaluated" in (activity.skip_reason or "")
    assert "pull_request" in (activity.skip_reason or "")


def test_malformed_payload_names_file_and_key(tmp_path: Path) -> None:
    broken = payload("pull_request.opened")
    del broken["pull_request"]["base"]["sha"]
    with pytest.raises(InputError) as info:
        activity_for("pull_request", broken, source="event.json")
    assert "event.json" in str(info.value) and "pull_request.base.sha" in str(info.value)
    (tmp_path / "event.json").write_text("{not json")
    with pytest.raises(InputError, match="not JSON"):
        load_event(tmp_path / "event.json")
    with pytest.raises(InputError, match="does not exist"):
        load_event(tmp_path / "missing.json")
