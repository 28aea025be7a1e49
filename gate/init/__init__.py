"""`gate init`: what it finds in a repository and the files it writes there.

Used by the `init` command only. It reads files as text, YAML and Python syntax trees and
writes gate.yml, starter cases and the PR workflow: nothing of the PR flow, no system, check,
provider or report (an import-linter contract keeps it so).
"""
