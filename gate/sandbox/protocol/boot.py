"""The zygote's first message: its limits, prelude and folders, as plain data.

The gate builds it from `sandbox:` in gate.yml; the zygote (standard library only) reads it
back with `from_dict` and passes it to every job.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Unassigned on common systems: below systemd's container range, above nspawn's.
DEFAULT_UID_BASE = 2_000_000_000
# Each running sandbox gets its own block of uids (one per worker slot), picked by its
# zygote's pid, so that concurrent runs (the base and head sides, parallel CI jobs) neither
# share RLIMIT_NPROC nor kill each other's processes when sweeping by uid.
MAX_WORKERS = 64
UID_BLOCKS = 1_000_000


@dataclass(frozen=True)
class ZygoteSetup:
    timeout_s: float = 5.0
    memory_mb: int = 512
    cpu_s: int = 6
    max_processes: int = 16
    max_open_files: int = 64
    max_file_mb: int = 16
    max_output_kb: int = 64
    workers: int = 1
    prelude: str = ""
    import_paths: list[str] = field(default_factory=list)
    path_labels: dict[str, str] = field(default_factory=dict)
    lib_dir: str = ""
    work_dir: str = ""
    uid_base: int = DEFAULT_UID_BASE

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ZygoteSetup:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
