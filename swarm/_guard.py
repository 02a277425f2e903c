"""Streams reply text to the caller while holding back anything that might be a leak.

Text is released a word at a time. From the first character that can open
JSON, XML or a code fence, from a word that names a tool, and (for an agent whose
money must come from tools, swarm/_amounts.py) from a digit, a currency sign or a
currency word, everything is held until the whole output has been validated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from swarm._amounts import MONEY_OPENER

_OPENERS = re.compile(r"[{\[<`]")


class SpeechGuard:
    def __init__(self, tool_names: Iterable[str], *, hold_money: bool = False) -> None:
        self._tools = {name.lower() for name in tool_names}
        self._openers = (_OPENERS, MONEY_OPENER) if hold_money else (_OPENERS,)
        self._pending = ""
        self._held = False
        self.released = ""

    def feed(self, text: str) -> str:
        """Take streamed text; return the part that is safe to speak now."""
        if self._held:
            return ""
        self._pending += text
        openers = [m.start() for r in self._openers if (m := r.search(self._pending))]
        if openers:
            candidate, self._held = self._pending[: min(openers)], True
        else:
            cut = max(self._pending.rfind(" "), self._pending.rfind("\n"))
            candidate = self._pending[: cut + 1] if cut >= 0 else ""
        for word in re.finditer(r"[\w.]+", candidate):
            if word.group(0).strip(".").lower() in self._tools:
                candidate, self._held = candidate[: word.start()], True
                break
        self._pending = self._pending[len(candidate) :]
        if not self.released:
            candidate = candidate.lstrip()
        self.released += candidate
        return candidate

    def remainder(self, final_text: str) -> str:
        """What is left to speak of the validated `final_text`, given what went out already."""
        if not self.released.strip():
            return final_text
        if final_text.startswith(self.released):
            return final_text[len(self.released) :]
        spoken = self.released.rstrip()
        if final_text.startswith(spoken):
            return final_text[len(spoken) :]
        # The validated text differs from what streamed (a parsed call was cut out):
        # never repeat or contradict what the caller already heard.
        return ""
