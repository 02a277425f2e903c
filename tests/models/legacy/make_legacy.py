"""Fill a database with the code of an older commit: a caller's conversation and an order."""

import asyncio
import sys
from pathlib import Path

from callswarm.app import build_services
from callswarm.settings import Settings


async def main(out: str, with_calls: bool) -> None:
    settings = Settings(data_dir=Path(out), provider="scripted", idle_timeout=None)
    services = build_services(settings)
    call = calls = None
    if with_calls:
        from callswarm.serve import live_calls
        from models.calls import Channel

        calls = live_calls(services)
        call = await calls.open("legacy-caller", Channel.WEB)
    session = services.engine.session("legacy-caller", services.swarm)
    for said in ["hello", "I'd like two boxes of paracetamol", "that's all", "yes"]:
        print(">", said, "|", await session.complete(said))
    if calls is not None:
        await calls.close(call, ended_by="caller")
    await services.aclose()


asyncio.run(main(sys.argv[1], sys.argv[2] == "calls"))
