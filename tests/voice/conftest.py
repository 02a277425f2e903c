from __future__ import annotations

from tests.conftest import catalogue_words

# The catalogue's names, as the gateway biases recognition with them.
VOCABULARY = catalogue_words()
