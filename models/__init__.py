"""callswarm's data: SQLModel tables, the database engine, and the stores built on them."""

from models.db import make_engine, sqlite_url
from models.session_store import SqlSessionStore
from models.tables import MessageRow, SessionRow, ThreadMessageRow, ThreadRow

__all__ = [
    "MessageRow",
    "SessionRow",
    "SqlSessionStore",
    "ThreadMessageRow",
    "ThreadRow",
    "make_engine",
    "sqlite_url",
]
