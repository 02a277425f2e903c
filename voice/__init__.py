"""Audio in, speech out: frames, codecs, resampling, VAD, STT, TTS and the voice loop.

It needs only a `Responder` (text in, a stream of reply text out), never agents or
swarm internals (see ../shared/DESIGN.md); `callswarm.voice_bridge` adapts a swarm
session to it.
"""
