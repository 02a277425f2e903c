"""The web layer: the FastAPI app, the push-to-talk page and the sockets behind it."""

from web.app import create_app
from web.gateway import Gateway

__all__ = ["Gateway", "create_app"]
