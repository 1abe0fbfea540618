"""`chronoprobe models ...`: where a model spec's weights are, and a local server for them.

Other tools (lm-evaluation-harness, ``transformers serve``, any ``from_pretrained``) load a
directory; ``models path`` prints the one a spec loads from (converting a GGUF file once), and
``models serve`` starts ``transformers serve`` on it on 127.0.0.1 and prints the ``--base-url``
and ``-m openai:...`` that probe it.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import Command, Group, reflowed
from chronoprobe.errors import UserError

app = typer.Typer(
    cls=Group,
    help="Where a model spec's weights are on this machine, and a local OpenAI-compatible "
    "server for them.",
    no_args_is_help=True,
)
console = Console(stderr=True, emoji=False)

SPEC_HELP = (
    "A model spec: package:smollm2, a .gguf file, a save_pretrained directory or a Hugging Face "
    "id (`chronoprobe list models` lists the forms)."
)
# continuous batching's paged key/value cache, sized by hand on a CPU (8,192 tokens, about
# 0.4 GB for SmolLM2): left to itself it took 14 GB of a 24 GB machine
CPU_BATCHING = ("--continuous-batching", "--cb-block-size", "32", "--cb-num-blocks", "256")
READY_SECONDS = 600


@app.command(cls=Command)
@reflowed
@user_errors
def path(spec: str = typer.Argument(..., help=SPEC_HELP, metavar="SPEC")) -> None:
    """Print the one directory a model spec's weights load from.

    A .gguf file (package:smollm2 is one) is converted first, once, into a save_pretrained
    directory of the models cache (CHRONOPROBE_MODELS): the weights chronoprobe probes for
    that spec. A Hugging Face id prints its snapshot in the local Hugging Face cache
    (downloaded first when the hub answers). Only the directory goes to stdout, so it can be
    used in another command.

    Example: chronoprobe models path package:smollm2
    """
    from chronoprobe.models.weights import weights_directory

    typer.echo(str(weights_directory(spec)))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_taken(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _serve_command(weights: Path, port: int, device: str) -> list[str]:
    """``transformers serve`` on ``weights``, on 127.0.0.1:``port``."""
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    program = shutil.which("transformers", path=str(Path(sys.executable).parent))
    program = program or shutil.which("transformers")
    if missing or program is None:
        raise UserError(
            "transformers serve needs its server packages: pip install 'chronoprobe[serve]'"
        )
    if device == "auto":
        from chronoprobe.core.devices import resolve_device

        device = resolve_device("auto").type
    batching = CPU_BATCHING if device == "cpu" else ("--continuous-batching",)
    # the precision chronoprobe loads the weights in here (--dtype auto), so that the server
    # answers as -m SPEC does: bf16 on a GPU, fp32 elsewhere
    dtype = "bfloat16" if device.startswith("cuda") else "float32"
    command = [program, "serve", str(weights), "--host", "127.0.0.1", "--port", str(port)]
    return [*command, "--device", device, "--dtype", dtype, *batching, "--log-level", "warning"]


def _wait_ready(server: subprocess.Popen, url: str) -> None:
    import httpx

    deadline = time.monotonic() + READY_SECONDS
    while server.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise UserError(f"transformers serve did not answer at {url} in {READY_SECONDS} s")
        time.sleep(0.5)
    raise UserError(f"transformers serve stopped (exit {server.returncode}); its lines are above")


def _stderr() -> int | None:
    """This process's stderr, for the server's output (None where it has no file)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@app.command(cls=Command)
@reflowed
@user_errors
def serve(
    spec: str = typer.Argument(..., help=SPEC_HELP, metavar="SPEC"),
    port: int = typer.Option(
        8000, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one)."
    ),
    device: str = typer.Option(
        "auto", "--device", help="auto (a GPU when there is one, else the CPU), cpu or cuda."
    ),
) -> None:
    """Serve a model spec's weights on 127.0.0.1 with transformers serve, an
    OpenAI-compatible server, and print the --base-url and -m openai:... that probe them.

    The weights are those `chronoprobe models path SPEC` prints (a .gguf file converted once:
    transformers serve cannot read the package's GGUF file itself), in the precision
    chronoprobe loads them in (float32 on a CPU, bfloat16 on a GPU), so that it answers as -m
    SPEC does. On a CPU the server's paged key/value cache is sized to 8,192 tokens (left to
    itself it takes most of the memory). Needs `pip install 'chronoprobe[serve]'`. The server
    runs until Ctrl-C.

    Example: chronoprobe models serve package:smollm2

    It prints the options that probe it, to paste in another shell: chronoprobe probe generate
    drift/ --base-url http://127.0.0.1:8000/v1 -m openai:DIR -o served/
    """
    from chronoprobe.models.weights import weights_directory

    weights = weights_directory(spec)
    if port == 0:
        port = _free_port()
    elif _port_taken(port):
        raise UserError(f"--port {port}: 127.0.0.1:{port} is taken; pass another (0: any free)")
    command = _serve_command(weights, port, device)
    url = f"http://127.0.0.1:{port}"
    console.print(f"starting transformers serve on {url} for {escape(spec)} ...", highlight=False)
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    # its own session: Ctrl-C stops it through us, and a kill of this command (SIGTERM) too
    # its log lines go to stderr: stdout is the line of options, for a script to read
    server = subprocess.Popen(command, env=env, start_new_session=True, stdout=_stderr())
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        _wait_ready(server, url)
        probe = shlex.join(["--base-url", f"{url}/v1", "-m", f"openai:{weights}"])
        console.print(
            f"serving {escape(spec)} at {url}/v1 (Ctrl-C stops it); probe it with:",
            highlight=False,
        )
        typer.echo(probe)  # stdout: the options to paste after a probe command
        sys.stdout.flush()
        server.wait()
        raise UserError(f"transformers serve stopped (exit {server.returncode})")
    except KeyboardInterrupt:
        console.print("stopped", highlight=False)
    finally:
        _stop(server)
