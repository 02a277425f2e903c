"""Drugs the catalogue does not hold, named as a caller names them.

A caller who asks for pravastatin said a drug, correctly, and the shop lacks it. The
search compares what it hears with the names it holds, and Atorvastatin is 0.86 alike:
offered outright, "make it two pravastatin" became two boxes of another statin
(measured, docs/performance.md). Likeness cannot tell such a drug from a name misheard,
and a list of drug names can: a word that names a drug nobody in the catalogue is, is
that drug, and it is never matched to another.

The names are the Drug Named Entity Recognition dictionary (`drug-named-entity-recognition`
on PyPI, MIT): 107,000 names of 20,000 drugs from DrugBank, MeSH, MedlinePlus, the NHS
and Wikipedia, brands included, each with the drug it stands for. It is read as data:
its module is not imported, since importing it reads a cache from the home folder.

A name is the catalogue's own (never taken away) when:
- it names a drug a product holds, as the dictionary pairs them ("tylenol" and
  "paracetamol" are both acetaminophen);
- or it is a word of the catalogue's names, ingredients or keywords, spelled either
  way ("acyclovir" for Aciclovir, "beclomethasone" for Beclometasone: British and
  American spellings the dictionary files as two drugs), or a piece of one heard apart
  ("fenamine" of chlorphenamine);
- or it is a name of several words holding one of those ("aspirin and omeprazole",
  "clotrimazole vaginal": the dictionary files combinations and leaflets as drugs).

Not taken as a drug: a phrase of dictionary words only ("caps", "peppermint", "plan
b"), nor a word under five letters; those are what callers say about anything.
"""

from __future__ import annotations

import bz2
import importlib.util
import logging
import pickle
import re
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from models.sounds import is_english

log = logging.getLogger(__name__)

_PACKAGE = "drug_named_entity_recognition"
_WORD = re.compile(r"[a-z0-9']+")
# The longest name looked for, in words: "hyoscine butylbromide", "fusidic acid".
_MAX_WORDS = 3


@dataclass(frozen=True, slots=True)
class Unheld:
    """A drug the caller named that no product is: tokens [start, end) of what was said."""

    start: int
    end: int
    name: str


@dataclass(frozen=True, slots=True, eq=False)  # one per read: hashed as itself
class _Names:
    said: Mapping[str, frozenset[str]]  # names a caller says, and the drugs they name
    written: Mapping[str, str]  # the names said with a hyphen: "co amoxiclav"
    every: Mapping[str, list[str]]  # every name as the wheel writes it, and its drugs
    drugs: frozenset[str]  # every drug's own name

    def of(self, phrase: str) -> frozenset[str]:
        """The drugs any name `phrase` is (as a caller's words are read) stands for."""
        found = set(self.every.get(phrase, ())) | set(self.every.get(phrase.replace(" ", "-"), ()))
        if phrase in self.drugs:
            found.add(phrase)
        return frozenset(found)


_LOADING = threading.Lock()
_loaded: list[_Names] = []  # the one read, once done


def drugs_named(phrase: str) -> frozenset[str]:
    """The drugs a name stands for in the list ("tylenol" and "paracetamol":
    acetaminophen), or none."""
    return _named_in(_dictionary(), phrase.lower())


@lru_cache(maxsize=4096)
def _named_in(names: _Names, phrase: str) -> frozenset[str]:
    # Kept per list read: a list read again (a test's empty one) is asked afresh.
    return names.of(phrase)


def load() -> None:
    """Read the names now (about two seconds), not at a caller's first search."""
    _dictionary()


def _dictionary() -> _Names:
    if _loaded:
        return _loaded[0]
    # One read: a search that comes while `load` reads waits for it.
    with _LOADING:
        if not _loaded:
            _loaded.append(_read())
        return _loaded[0]


def _read() -> _Names:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        # A broken install must not stop the search: it matches every name as before.
        log.error("drug_names_missing package=%s: drugs the catalogue lacks are not told", _PACKAGE)
        return _Names(MappingProxyType({}), MappingProxyType({}), MappingProxyType({}), frozenset())
    path = Path(next(iter(spec.submodule_search_locations))) / "drug_ner_dictionary.pkl.bz2"
    with bz2.open(path, "rb") as f:
        # The package's own data, as trusted as its code: it loads the same file so.
        table = pickle.load(f)  # noqa: S301
    drugs = table["drug_canonical_to_data"]
    # Drugs with a leaflet for patients (MedlinePlus or the NHS), 1,559 of 20,070: the
    # rest are a chemist's names, and some are words a recogniser writes for anything
    # ("laman", an enzyme's brand, for "lemon").
    leaflets = {d for d, data in drugs.items() if "medline_plus_id" in data or "nhs_url" in data}
    variants: dict[str, list[str]] = table["drug_variant_to_canonical"]
    said: dict[str, frozenset[str]] = {}
    written: dict[str, str] = {}
    # A drug's own name names it, though the table lists it only when it is a variant
    # too ("nicotine" is there as "nikotin" and "nicotina").
    for name, canonicals in [*((d, [d]) for d in leaflets), *variants.items()]:
        if leaflets.isdisjoint(canonicals):
            continue
        # As a caller's words are read: "co-amoxiclav" is "co amoxiclav".
        variant = " ".join(name.replace("-", " ").split())
        words = variant.split()
        if (
            len(words) <= _MAX_WORDS
            and all(_WORD.fullmatch(w) for w in words)
            and (len(words) > 1 or len(variant) >= 5)
            and not all(is_english(w, webster_only=True) for w in words)
        ):
            said[variant] = said.get(variant, frozenset()) | frozenset(canonicals)
            if variant != name:
                written[variant] = name
    return _Names(
        MappingProxyType(said),
        MappingProxyType(written),
        MappingProxyType(variants),
        frozenset(drugs),
    )


@lru_cache(maxsize=8192)
def spelling(phrase: str) -> str:
    """One spelling for the ways a drug is written: British and American
    ("beclomethasone" and "beclometasone", "acyclovir" and "aciclovir", "ferrous
    sulphate" and "ferrous sulfate") and as a recogniser spells it ("nikotin"). A
    letter or a number alone is kept as it is: "vitamin k" is not "vitamin c"."""
    return "".join(_spelled(w) for w in _WORD.findall(phrase.lower()))


def _spelled(word: str) -> str:
    if len(word) < 2 or not word.isalpha():
        return f" {word} "
    w = word
    for pattern, repl in (("ph", "f"), ("ae", "e"), ("oe", "e"), ("y", "i"), ("c", "k")):
        w = w.replace(pattern, repl)
    return re.sub(r"(.)\1+", r"\1", w.replace("h", "")).removesuffix("e")


@dataclass(frozen=True, slots=True)
class _Held:
    drugs: frozenset[str]  # the dictionary's drugs a product holds
    spellings: frozenset[str]  # every phrase of the catalogue's words, in one spelling
    words: tuple[str, ...]  # its words of six letters or more, in that spelling

    def own(self, phrase: str) -> bool:
        """The phrase is the catalogue's own words, or a piece of one of them that the
        recogniser heard apart: "fenamine" (a name of amphetamine) of "tricore
        phenamine", heard for chlorphenamine."""
        said = spelling(phrase)
        return said in self.spellings or any(
            w.endswith(said) or w.startswith(said) for w in self.words
        )

    def in_name(self, words: list[str]) -> bool:
        """A name of several words that holds a drug of the catalogue's, or too few
        letters of its own to be one: the list files combinations and leaflets as
        drugs of their own ("aspirin and omeprazole", "clotrimazole vaginal", "uti
        relief"), and each of those words is the caller's request as it is."""
        if len(words) < 2:
            return False
        own = [w for w in words if not is_english(w, webster_only=True)]
        return any(len(w) >= 4 and self.own(w) for w in own) or sum(map(len, own)) < 5


def _held(catalogue: tuple[str, ...]) -> _Held:
    return _held_in(_dictionary(), catalogue)


@lru_cache(maxsize=16)
def _held_in(names: _Names, catalogue: tuple[str, ...]) -> _Held:
    # Per list read, as `_named_in`.
    drugs: set[str] = set()
    spellings: set[str] = set()
    for text in catalogue:
        for phrase in _phrases(_WORD.findall(text.lower().replace("-", " "))):
            spellings.add(spelling(phrase))
            drugs |= names.of(phrase)
    words = tuple(sorted({spelling(w) for w in _WORD.findall(" ".join(catalogue).lower())}))
    words = tuple(w for w in words if len(w) >= 6)
    return _Held(frozenset(drugs), frozenset(spellings), words)


def _phrases(words: list[str]) -> Iterable[str]:
    for n in range(1, _MAX_WORDS + 1):
        for i in range(len(words) - n + 1):
            yield " ".join(words[i : i + n])


def names_a_drug(tokens: list[str], held: Collection[str] = ()) -> bool:
    """Whether the words hold a drug's name, but for those `held` (see `unheld`): most
    hold none."""
    names = _dictionary().said
    return any(p in names and p not in held for p in _phrases(_bare(tokens)))


def _bare(tokens: list[str]) -> list[str]:
    """The words as a name is listed: "esomeprazole's" is "esomeprazole"."""
    return [t.removesuffix("'s").strip("'") for t in tokens]


# Said just before a person's own name: "my name's Camila", "call me Allegra". Brands
# are given names too (camila, allegra, lyrica), and a caller who gives a name has not
# asked for a drug. "Name's" is read as "name", as names are.
# Not "the name is": "my doctor said the name is loratadine" is the drug.
_OWN_NAME_AFTER = tuple(
    (whose, "name", *rest) for whose in ("my", "her", "his") for rest in ((), ("is",))
) + (("call", "me"),)
# "This is Allegra speaking", "it's Camila here": a name between these.
_INTRO = (("this", "is"), ("it",), ("its",), ("it", "is"))
_INTRO_END = frozenset("here speaking calling again".split())


def persons(tokens: list[str]) -> frozenset[int]:
    """Which of the words are said as someone's own name: after "my name's", "her name
    is" or "call me", or between "this is" and "here" or "speaking". Only a word no
    dictionary holds, or a drug's: an everyday word there ("this is Rose here") would
    name no product anyway. "I'm Lyrica" and "for my husband, pravastatin" are not
    read so: the recogniser drops words ("I'm [on] pravastatin") and commas, and a drug
    the shop lacks heard as a name would be matched to one it has."""
    names = _dictionary().said
    words = _bare(tokens)
    found: set[int] = set()
    for i, word in enumerate(words):
        before = tuple(words[max(0, i - 3) : i])
        cued = any(before[-len(cue) :] == cue for cue in _OWN_NAME_AFTER) or (
            words[i + 1 : i + 2] != []
            and words[i + 1] in _INTRO_END
            and any(before[-len(cue) :] == cue for cue in _INTRO)
        )
        if cued and (word in names or not is_english(word, webster_only=True)):
            found.add(i)
    return frozenset(found)


def unheld(
    tokens: list[str], catalogue: tuple[str, ...], seen: set[str] | None = None
) -> tuple[Unheld, ...]:
    """The drugs `tokens` name that no product of `catalogue` (its names, ingredients
    and keywords) is, longest first where they overlap. The names it finds held go into
    `seen`, for `names_a_drug` to pass over next time."""
    table = _dictionary()
    names = table.said
    held = _held(catalogue)
    found: list[Unheld] = []
    taken: set[int] = set()
    bare = _bare(tokens)
    people = persons(bare)
    for n in range(_MAX_WORDS, 0, -1):
        for i in range(len(bare) - n + 1):
            span = range(i, i + n)
            phrase = " ".join(bare[i : i + n])
            drugs = names.get(phrase)
            if not drugs or taken.intersection(span):
                continue
            if drugs & held.drugs or held.own(phrase) or held.in_name(bare[i : i + n]):
                if seen is not None:
                    seen.add(phrase)
                continue
            if people.intersection(span):
                # Not remembered as held: the same word elsewhere is the drug.
                continue
            found.append(Unheld(i, i + n, table.written.get(phrase, phrase)))
            taken.update(span)
    return tuple(sorted(found, key=lambda u: u.start))
