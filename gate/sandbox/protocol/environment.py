"""The one environment every job sees: these names, nothing inherited, no secrets.

The zygote sets it (`gate.sandbox.zygote.isolate.scrub_environment`) and the gate reports it
(`gate.sandbox.host.protections`); both read it from here.
"""

from __future__ import annotations

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
JOB_ENVIRONMENT = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LANG")


def job_environment(home: str, lang: str) -> dict[str, str]:
    """The environment of a job whose home (and temporary folder) is `home`."""
    values = {
        "PATH": SAFE_PATH,
        "HOME": home,
        "TMPDIR": home,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": lang,
    }
    return {name: values[name] for name in JOB_ENVIRONMENT}
