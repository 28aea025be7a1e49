"""Runs an inspect_ai task for one side, in the system's confined worker
(`gate.frameworks.process`): the gate's own module, a `python` system's target (`answer`)
that imports nothing of the gate. It lives as long as the side's runner: the task is loaded
once, then each request lists its samples or runs some of them.

Request: `task` (`FILE.py@name`), `task_args`, `model`, `model_args`, `epochs`, `ids` (the
sample ids to run, None: all), `list` (only name the samples), `log_dir` and `cache_dir` (the
run's own folders), `max_samples`. Answer: `{"task", "dataset", "samples": [ids in dataset
order], "ran": [ids run]}`, `{"refused": message}` for a task the gate cannot pair (samples
without explicit ids, duplicates), or `{"error": message}`.
"""

import os
import sys

RUN_FOLDER = os.path.realpath(os.getcwd())  # the worker runs in the run folder
_SEARCHED = list(sys.path)
# The worker put the run folder first on the import path to find this module: the gate's own
# imports below must not find the PR's modules of the same names (a `json.py`, an
# `inspect_ai/`).
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != RUN_FOLDER]

from typing import Any  # noqa: E402

try:
    from inspect_ai import eval as inspect_eval
    from inspect_ai._eval.loader import load_tasks
except ImportError as exc:
    MISSING: str | None = str(exc)
else:
    MISSING = None

sys.path[:] = _SEARCHED

TASKS: dict[str, Any] = {}  # loaded tasks, by their request


class Refused(Exception):
    """The task cannot be measured as it is: the message is the user's to fix."""


def load_task(request: dict[str, Any]) -> Any:
    if MISSING is not None:
        raise Refused(
            f"inspect_ai cannot be imported by the gate's Python ({MISSING}): install it beside "
            "the gate (pip install 'eval-gate[inspect]')"
        )
    key = repr((request["task"], sorted((request.get("task_args") or {}).items())))
    if key not in TASKS:
        tasks = load_tasks([request["task"]], request.get("task_args") or {})
        if len(tasks) != 1:
            raise Refused(f"{request['task']} names {len(tasks)} tasks: name one, `FILE.py@task`")
        TASKS[key] = tasks[0]
    return TASKS[key]


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
    return [s.id for s in task.dataset if wanted is None or str(s.id) in wanted]


def run(request: dict[str, Any]) -> dict[str, Any]:
    task = load_task(request)
    ids = sample_ids(task)
    answer = {"task": task.name, "dataset": task.dataset.name, "samples": ids, "ran": []}
    if request.get("list"):
        return answer
    picked = chosen(task, request)
    if not picked:
        return answer
    # the run's own cache: a later round (whose epochs inspect numbers from 1 again) never
    # replays an earlier one's answers
    os.environ["INSPECT_CACHE_DIR"] = request["cache_dir"]
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


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """One request of the side's runner (the worker calls it), answered whole."""
    if RUN_FOLDER not in sys.path[:1]:
        sys.path.insert(0, RUN_FOLDER)  # the checkout's packages, as `inspect eval` sees them
    try:
        return run(request)
    except Refused as exc:
        return {"refused": str(exc)}
    except BaseException as exc:  # the task's or the system's failure, reported whole
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}
