"""The `rig` commands, one module each: its typer options, its output, and its work as functions callable from
Python. `rig.cli` assembles them into the `rig` app and turns their errors into exit codes."""
