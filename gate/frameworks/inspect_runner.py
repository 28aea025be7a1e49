"""Runs an inspect_ai task in the system's confinement (`gate.frameworks.process`): the
gate's own script, handed to `python -P -c`, importing nothing of the gate.

Request (JSON on stdin): `task` (`FILE.py@name`), `task_args`, `model`, `model_args`, `epochs`,
`ids` (the sample ids to run, None: all), `shard` (`[index, total]` or None), `list` (only
name the samples), `log_dir`, `max_samples`. Answer (JSON on the copy of stdout taken first):
`{"task", "dataset", "samples": [ids in dataset order], "ran": [ids run]}`, `{"refused":
message}` for a task the gate cannot pair (samples without explicit ids, duplicates), or
`{"error": message}`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any


class Refused(Exception):
    """The task cannot be measured as it is: the message is the user's to fix."""


def shard_of(case_id: str, total: int) -> int:
    """As `gate.inputs.shard.shard_of` (a test holds them equal)."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def load_task(request: dict[str, Any]) -> Any:
    try:
        from inspect_ai._eval.loader import load_tasks
    except ImportError as exc:
        raise Refused(
            f"inspect_ai cannot be imported by the gate's Python ({exc}): install it beside the "
            "gate (pip install 'eval-gate[inspect]')"
        ) from None

    tasks = load_tasks([request["task"]], request.get("task_args") or {})
    if len(tasks) != 1:
        raise Refused(f"{request['task']} names {len(tasks)} tasks: name one, `FILE.py@task`")
    return tasks[0]


def sample_ids(task: Any) -> list[str]:
    """The samples' explicit ids, in dataset order; refused without them (positional ids
    would pair the wrong samples once the dataset is reordered) or with one twice."""
    dataset = task.dataset
    named = f"{dataset.name!r} ({dataset.location})" if dataset.location else repr(dataset.name)
    where = f"task {task.name!r}, dataset {named}"
    samples = list(dataset)
    missing = [n for n, sample in enumerate(samples, 1) if sample.id is None]
    if missing:
        raise Refused(
            f"{where}: {len(missing)} of {len(samples)} samples have no id (the first is sample "
            f"{missing[0]}): give every sample an explicit id (`Sample(id=...)`, or the id field "
            "of the dataset's FieldSpec); positional ids would pair the wrong samples once the "
            "dataset is reordered"
        )
    ids = [str(sample.id) for sample in samples]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise Refused(f"{where}: sample ids must be unique, repeated: {', '.join(twice[:5])}")
    return ids


def chosen(task: Any, request: dict[str, Any]) -> list[Any]:
    """The samples to run, as their own ids (inspect's `sample_id` compares them as given)."""
    wanted = set(request["ids"]) if request.get("ids") is not None else None
    shard = request.get("shard")
    picked = []
    for sample in task.dataset:
        key = str(sample.id)
        if wanted is not None and key not in wanted:
            continue
        if shard and shard_of(key, shard[1]) != shard[0]:
            continue
        picked.append(sample.id)
    return picked


def run(request: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, os.getcwd())  # the checkout's packages, as `python -m` would see them
    task = load_task(request)
    ids = sample_ids(task)
    answer = {"task": task.name, "dataset": task.dataset.name, "samples": ids, "ran": []}
    if request.get("list"):
        return answer
    picked = chosen(task, request)
    if not picked:
        return answer
    from inspect_ai import eval as inspect_eval

    inspect_eval(
        task,
        model=request.get("model"),
        model_args=request.get("model_args") or {},
        epochs=request.get("epochs") or 1,
        sample_id=picked,
        log_dir=request["log_dir"],
        log_format="eval",
        display="none",
        max_samples=request.get("max_samples"),
        fail_on_error=False,
        score=True,
    )
    return {**answer, "ran": [str(i) for i in picked]}


def main() -> None:
    request = json.loads(sys.stdin.read())
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the task and the system print is not the answer
    try:
        answer = run(request)
    except Refused as exc:
        answer = {"refused": str(exc)}
    except BaseException as exc:  # the task's or the system's failure, reported whole
        answer = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    answers.write(json.dumps(answer))
    answers.flush()
    os._exit(0)  # threads the task left must not keep the process


if __name__ == "__main__":
    main()
