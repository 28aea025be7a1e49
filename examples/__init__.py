"""The example workflows, shipped as `gate.examples` (`gate init` writes pr-gate.yml)."""
