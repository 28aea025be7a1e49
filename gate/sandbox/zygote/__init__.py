"""The zygote's side of the sandbox: runs in the zygote, its fork server and every job.

Standard library only: these modules never import pydantic or anything outside
`gate.sandbox.zygote` and `gate.sandbox.protocol` (see `gate.sandbox` for the file map).
"""
