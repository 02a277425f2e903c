"""An agent's warmed prompt, kept on disk so a restart need not read it again.

Reading an agent's system prompt and tools into llama.cpp takes 5-13 s on two
cores; loading the saved state of that context takes a fraction of a second.
A state file is named by a key over everything that makes it valid: the model's
sha256, the llama.cpp build, the context settings and the prompt itself. A
changed prompt or model therefore looks for another file, and the stale one is
removed once the new one is written.

Even a wrong file could not give a wrong answer: llama.cpp saves the tokens
beside their KV cache, and a completion reuses only the prefix of them that
matches its own prompt.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("swarm.local")

SUFFIX = ".llstate"
_HASH_CHUNK = 8 * 1024 * 1024


def file_sha256(path: Path, memo_dir: Path) -> str:
    """The file's sha256, remembered in `memo_dir` while its path, size and mtime stay the
    same: hashing a 1 GB model takes seconds, a restart should not (and the model's own
    directory may be read-only, as in the Docker image)."""
    stat = path.stat()
    stamp = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".replace(" ", "_")
    memo = memo_dir / (path.name + ".sha256")
    try:
        saved_stamp, digest = memo.read_text().split()
        if saved_stamp == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    hasher = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_HASH_CHUNK):
            hasher.update(chunk)
    digest = hasher.hexdigest()
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        memo.write_text(f"{stamp} {digest}\n")
    except OSError:  # a read-only data directory: hash again next time
        pass
    return digest


@dataclass(frozen=True, slots=True)
class StateCache:
    """Where an agent's warmed context is saved; `model_sha256` names the weights."""

    directory: Path
    model_sha256: str

    def key(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        settings: Mapping[str, Any],
    ) -> str:
        import llama_cpp

        material = {
            "model": self.model_sha256,
            "llama_cpp": llama_cpp.__version__,
            "settings": dict(settings),
            "messages": list(messages),
            "tools": list(tools or ()),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]

    def path(self, agent: str, key: str) -> Path:
        # The model in the name: saving one model's state never prunes another's.
        return self.directory / f"{_safe(agent)}-{self.model_sha256[:12]}-{key}{SUFFIX}"

    def load(self, llama: Any, path: Path) -> int | None:
        """Restore `llama`'s context from `path`; the number of tokens, or None if there
        was nothing usable (then the context is empty, as if new)."""
        import llama_cpp

        if not path.is_file():
            return None
        capacity = llama.n_ctx()
        tokens = (llama_cpp.llama_token * capacity)()
        count = ctypes.c_size_t(0)
        ok = llama_cpp.llama_state_load_file(
            llama.ctx, os.fsencode(path), tokens, capacity, ctypes.byref(count)
        )
        if not ok or count.value == 0:
            log.warning("local_state_unusable path=%s", path)
            llama.reset()  # whatever was half-loaded is overwritten from position 0
            path.unlink(missing_ok=True)
            return None
        n = count.value
        llama.input_ids[:n] = tokens[:n]
        llama.n_tokens = n
        # The logits in the file are not the sampler's: decode one token again first.
        llama._requires_eval = True
        return n

    def save(self, llama: Any, path: Path) -> int:
        """Write `llama`'s context to `path` (atomically) and drop the agent's older states;
        the file's size in bytes."""
        import llama_cpp

        self.directory.mkdir(parents=True, exist_ok=True)
        n = llama.n_tokens
        tokens = (llama_cpp.llama_token * n)(*llama.input_ids[:n])
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        if not llama_cpp.llama_state_save_file(llama.ctx, os.fsencode(partial), tokens, n):
            partial.unlink(missing_ok=True)
            raise OSError(f"llama.cpp could not write {partial}")
        os.replace(partial, path)
        prefix = path.name.rsplit("-", 1)[0] + "-"
        for old in self.directory.glob(f"{prefix}*{SUFFIX}"):
            if old != path and re.fullmatch(r"[0-9a-f]{32}", old.name[len(prefix) : -len(SUFFIX)]):
                old.unlink(missing_ok=True)
        return path.stat().st_size


def _safe(agent: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", agent) or "agent"
