"""Audio in, speech out: frames, VAD, STT, TTS and the per-caller voice loop.

It needs only a "reply to this text" stream, never agents or swarm internals
(see ../shared/DESIGN.md). Built by issue 4.
"""
