"""Loading the embedded model leaves the process's output alone.

llama-cpp-python points file descriptors 1 and 2 at /dev/null while a model loads. A
gateway loads its models while it serves, so what other threads wrote meanwhile (log
lines, `callswarm chat`'s replies) was lost.
"""

from __future__ import annotations

import os
import threading

from swarm import CompletionArgs
from swarm.backends.local import LlamaCppBackend, LocalModelOptions


async def test_what_other_threads_write_during_a_load_is_kept(bundled_model, capfd) -> None:
    backend = LlamaCppBackend(bundled_model, LocalModelOptions(n_ctx=512))
    done = threading.Event()
    written = 0

    def write() -> None:
        nonlocal written
        while not done.is_set():
            os.write(1, b".")
            os.write(2, b"!")
            written += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        await backend.warm_up(
            [
                CompletionArgs(
                    client_id="warm-up",
                    agent_name="triage",
                    messages=({"role": "system", "content": "You answer the telephone."},),
                    tools=(),
                )
            ]
        )
    finally:
        done.set()
        writer.join()
    out, err = capfd.readouterr()
    assert written > 100  # the writer ran all through the load
    assert out.count(".") == written
    assert err.count("!") == written
