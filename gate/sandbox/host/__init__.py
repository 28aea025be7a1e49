"""The gate's side of the sandbox: runs in the gate's process (see `gate.sandbox`)."""
