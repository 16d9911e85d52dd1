"""`rig sites serve`: the bundled replica sites on 127.0.0.1 until interrupted (`rig.sites`)."""

from __future__ import annotations

import typer

from rig.commands.console import err, say
from rig.errors import InputError
from rig.sites import serve

app = typer.Typer(no_args_is_help=True, help="The bundled replica sites.")


@app.command("serve")
def sites_serve(port: int = typer.Option(8765, help="port on 127.0.0.1")) -> None:
    """Serve the bundled replica sites on 127.0.0.1 until interrupted."""
    if not 0 <= port <= 65535:
        raise InputError("--port", None, f"{port} is not a TCP port (0 to 65535)")
    say(f"serving the bundled sites at http://127.0.0.1:{port}/ (Ctrl-C to stop)", err)
    serve(port)
