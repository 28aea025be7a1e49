"""Eval Gate: keeps pull requests from silently making an LLM feature worse."""

__version__ = "0.1.0"
REPORT_SCHEMA_VERSION = 3
