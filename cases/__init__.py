"""Example suites and the offline example system they run against (bundled for `gate demo`)."""
