"""A side's runner process: `python -I -m gate.run.serve REQUESTS_FD RECORDS_FD`.

It reads its `SideSpec` and then requests from the first descriptor and answers on the second
(`gate.run.protocol`); both are its own (not inheritable), so neither its system's processes
nor what they print can speak for it. Its stdout and stderr are the side's log (progress).
"""

from __future__ import annotations

import os
import sys
from typing import IO

from pydantic import ValidationError

from gate.errors import GateError
from gate.run.protocol import REQUEST, Close, Done, Failed, Ready, Result
from gate.run.side import SideRunner
from gate.run.spec import SideSpec


def _send(out: IO[str], record: Ready | Result | Done | Failed) -> None:
    out.write(record.model_dump_json() + "\n")
    out.flush()


def serve(requests: IO[str], records: IO[str]) -> int:
    try:
        spec = SideSpec.model_validate_json(requests.readline())
    except ValidationError as err:  # the flow's bug, not the user's input
        _send(records, Failed(message=f"a side the runner cannot read: {err}", exit_code=3))
        return 3
    try:
        with SideRunner(spec) as runner:
            assert runner.meta is not None
            _send(records, Ready(meta=runner.meta))
            for line in requests:
                request = REQUEST.validate_json(line)
                if isinstance(request, Close):
                    break
                runner.run(request.ids, request.repeats, lambda r: _send(records, Result(result=r)))
                _send(records, Done(http=runner.traffic))
    except GateError as exc:
        _send(records, Failed(message=str(exc), exit_code=exc.exit_code))
        print(f"gate: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


def main(argv: list[str]) -> int:
    request_fd, record_fd = (int(arg) for arg in argv)
    for fd in (request_fd, record_fd):  # the system's processes never get them
        os.set_inheritable(fd, False)
    with (
        os.fdopen(request_fd, encoding="utf-8") as requests,
        os.fdopen(record_fd, "w", encoding="utf-8") as records,
    ):
        return serve(requests, records)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
