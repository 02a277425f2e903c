"""Product search that survives speech recognition.

Two signals, merged by score:
- full text (SQLite FTS5, or PostgreSQL's text search) for descriptive
  queries: "something for a headache";
- letter and phonetic similarity of the query's word n-grams to product names
  and ingredients, for names the recogniser split or misheard:
  "Paris at them all" is Paracetamol, "ibu profen" is Ibuprofen.

Over ~400 lines on purpose: letters, sounds and full text are one ranking, and the
rules that keep a heard word from naming the wrong drug only read right side by side.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple
from weakref import WeakKeyDictionary

import numpy as np
from rapidfuzz.fuzz import ratio
from rapidfuzz.process import cdist
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from models.combinations import (
    Made,
    all_named,
    holding,
    made_of,
    of_these_only,
    together_lacked,
)
from models.drug_names import Unheld, names_a_drug, persons, unheld
from models.shop import Product
from models.sounds import everyday, is_english, sounds_of

_WORD = re.compile(r"[a-z0-9']+")
# Words of conversation, not of products: never matched on their own.
_STOP = frozenset(
    "a an and any are at but can could do does for from get give got have has had i i'd i'm "
    "i'll i've in is it it's its like me my need of on or please some something anything the "
    "to want what with would you your buy order box boxes pack packs bottle bottles tube of "
    "will take taking just also thanks thank yes yeah no ok okay that that's thats this these "
    "those more much many how cost costs price be been am was were they them there here it "
    "well so too very really sure hello hi hey good morning think maybe use about should if "
    "then else everything nothing done add put same one ones kind sort type looking after "
    "let us we our help tell know got gotten go going all when where why who which today "
    "tomorrow tonight time now hiya howdy howya g'day gday hullo afternoon evening he she him her his hers "
    "he's she's hear ringing calling phoning".split()
)
# Callers tell pills by colour ("the pink ones", "the little white tablets"): a colour
# names no product, but in a name or keywords said in a row ("pink eye").
_COLOURS = frozenset("pink blue red green yellow white orange purple brown black grey gray".split())
# Words in product names that say what kind of thing it is, not which product.
_GENERIC = frozenset(
    "cream gel tablets tablet spray nasal drops eye ear lotion syrup suspension solution capsules "
    "inhaler patches lozenges "
    "relief treatment remedy extra pack strong children's childrens low dose advance after sun "
    "test tests sachets salts oral cough sore throat cold flu herbal".split()
)
# What a product is, not which: "ranitidine tablets" must not find every tablet.
_FORMS = frozenset(
    "tablet tablets capsule capsules cream creams gel spray drops lotion syrup sachets "
    "liquid pills pill medicine medicines stuff product products".split()
)
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve dozen half".split()
)


# What PostgreSQL's full text matches, and what its GIN index (migration 0002) is built
# on: the same expression, or the planner cannot use the index. Like SQLite's FTS5
# table, it leaves descriptions out.
PG_DOCUMENT = "to_tsvector('english', name || ' ' || active_ingredient || ' ' || keywords)"


@dataclass(frozen=True, slots=True)
class Hit:
    product: Product
    score: float
    # How well the words matched the product's own name or ingredient (0 when only
    # the full-text search found it, through its keywords).
    name_score: float = 0.0
    # The same match weighed by how little of the sentence it is, as every match was
    # before a misheard name counted whole (`_misheard`); None when it is name_score.
    # The guess gate reads this one: it was measured on it, and a name the catalogue
    # lacks ("famciclovir", 0.83 here, 0.855 whole) must still be asked about.
    in_sentence: float | None = None

    @property
    def sure(self) -> float:
        return self.name_score if self.in_sentence is None else self.in_sentence


@lru_cache(maxsize=4096)
def phonetic_key(word: str) -> str:
    """A small Metaphone-like key tuned for drug names as a recogniser spells them."""
    w = respell(word)
    if not w:
        return ""
    head, tail = w[0], re.sub(r"[aeiouyhw]", "", w[1:])
    key = head + tail
    return re.sub(r"(.)\1+", r"\1", key)


@lru_cache(maxsize=4096)
def respell(word: str) -> str:
    """One spelling per sound, vowels kept: "ibupurlphin" → "ipupurlfin"."""
    w = re.sub(r"[^a-z]", "", word.lower())
    for pattern, repl in (
        (r"ph", "f"),
        (r"th", "t"),
        (r"ck", "k"),
        (r"sch", "sk"),
        (r"qu", "kw"),
        (r"x", "ks"),
        (r"c(?=[eiy])", "s"),
        (r"c", "k"),
        (r"z", "s"),
        (r"gh", "g"),
        (r"^kn", "n"),
        (r"^wr", "r"),
        (r"dg", "j"),
        (r"v", "f"),
        # A recogniser confuses voiced and unvoiced pairs: "lacked you lose" for lactulose.
        (r"d", "t"),
        (r"b", "p"),
        (r"g", "k"),
    ):
        w = re.sub(pattern, repl, w)
    return w


def _similarity(a: str, b: str) -> float:
    # "ph" heard for "f" is one sound, not two wrong letters.
    letters = max(ratio(a, b), ratio(respell(a), respell(b))) / 100
    key_a, key_b = phonetic_key(a), phonetic_key(b)
    # Keys collide by chance ("fever" and "vera" are both "fr", "salbute" and "sleep
    # aid" both "slpt"), so a sound match counts only half, the letters the other half.
    if min(len(key_a), len(key_b)) < 4:
        return letters
    if key_a == key_b and len(key_a) >= 6:
        return max(letters, 0.95)  # six consonants in order rarely agree by chance
    # The key keeps a leading vowel, so a misheard opening ("mompersol" for omeprazole)
    # costs as much as a wrong consonant; compare the keys without it too.
    sounds = max(ratio(key_a, key_b), ratio(key_a.lstrip("aeiou"), key_b.lstrip("aeiou")))
    return max(letters, (letters + sounds / 100) / 2)


# A name shorter than this, in sound classes, is matched on its letters only: short
# strings of sounds agree by chance ("sins" for zinc is also "sense" and "since").
_SOUND_MIN = 6


def _sound_similarity(gram: tuple[str, ...], target: tuple[str, ...]) -> float:
    """How alike the words sound: "low remide" and "loperamide", "tricore phenamine"
    and "chlorphenamine", which share too few letters to match on them. Only for words
    that hold one the recogniser made up (see models/sounds.py)."""
    name = sounds_of(target)
    if not name or len(name) < _SOUND_MIN:
        return 0.0
    heard = sounds_of(gram)
    return ratio(heard, name) / 100 if heard else 0.0


def _first_ingredient(ingredients: str) -> str:
    """The drug a product is named for: "paracetamol" of "paracetamol and caffeine"."""
    return ingredients.split(",")[0].split(" and ")[0]


# A name spelled out, as asked when it was not caught: "O-M-E-P-R-A-Z-O-L-E", "o, m, e".
_SPELLED = re.compile(r"(?<![\w'])(?:[a-z][\s,.-]+){3,}[a-z]\b")


def _tokens(query: str) -> list[str]:
    lowered = _SPELLED.sub(lambda m: re.sub(r"[^a-z]", "", m.group(0)), query.lower())
    return _WORD.findall(lowered)


def content_words(text: str) -> list[str]:
    """The words of `text` that could name or describe a product."""
    return [
        t
        for t in _tokens(text)
        if t not in _STOP
        and t not in _FORMS
        and t not in _NUMBER_WORDS
        and not t.isdigit()
        and len(t) > 2
    ]


def _windows(tokens: list[str], max_n: int = 4) -> set[tuple[str, ...]]:
    grams = set()
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            window = tuple(tokens[i : i + n])
            if all(t in _STOP or t in _NUMBER_WORDS or t.isdigit() for t in window):
                continue
            grams.add(window)
    return {g for g in grams if len("".join(g)) >= 3}


@lru_cache(maxsize=1024)
def _targets(
    name: str, ingredient: str, brands: tuple[str, ...] = ()
) -> tuple[tuple[tuple[str, ...], float], ...]:
    """Words a caller may say for a product, with how much a match on each counts."""
    words = tuple(_tokens(name))
    out = {words: 1.0}
    for n in (2, 3):  # "cold sore" in "Aciclovir Cold Sore Cream"
        for i in range(len(words) - n + 1):
            out.setdefault(words[i : i + n], 0.95)
    for word in words:
        if len(word) >= 5 and word not in _STOP and word not in _GENERIC:
            out.setdefault((word,), 0.95)
    first = tuple(_tokens(_first_ingredient(ingredient)))
    if first:
        out.setdefault(first, 0.9)
    for brand in brands:
        out.setdefault((brand,), 0.9)
    return tuple(out.items())


def _brands(products: tuple[Named, ...]) -> Mapping[str, tuple[str, ...]]:
    """Each product's brands: callers name a product by brand ("Piriton", "Lamisil") as
    often as by drug, and the recogniser mangles a brand as it does a drug ("Tyritan",
    "Lamissol"), so a brand is matched as a name is, by letters and by sound. A brand is
    a keyword no dictionary holds, of one drug's products only, and no product's name:
    "hayfever" is two drugs' keyword, "lactulose" a name already."""
    in_names = {w for p in products for w in _tokens(p.name)}
    holders: dict[str, set[str]] = {}
    for p in products:
        for word in set(_tokens(p.keywords)):
            if len(word) >= 5 and word.isalpha() and word not in in_names:
                holders.setdefault(word, set()).add(_first_ingredient(p.active_ingredient))
    brands = {w for w, drugs in holders.items() if len(drugs) == 1 and not is_english(w)}
    return MappingProxyType(
        {p.sku: tuple(sorted(brands & set(_tokens(p.keywords)))) for p in products}
    )


# `only_everyday_words` asks about one product at a time: room for those beside the
# catalogue's own table, which a turn would otherwise rebuild.
@lru_cache(maxsize=128)
def _target_table(
    products: tuple[Named, ...],
) -> tuple[
    tuple[tuple[int, tuple[str, ...], float], ...],
    tuple[tuple[str, ...], ...],
    tuple[tuple[str, ...], ...],
    frozenset[str],
]:
    """Every (product, target, weight), then the targets that are names or ingredients,
    then those that are brands only, then every target as written (`_misheard`): built
    once per catalogue, not once per search."""
    # Without keywords (`only_everyday_words`' one product) there are no brands to find.
    brands = _brands(products) if any(p.keywords for p in products) else {}
    named = tuple(
        (i, words, weight)
        for i, p in enumerate(products)
        for words, weight in _targets(p.name, p.active_ingredient, brands.get(p.sku, ()))
    )
    names = tuple(sorted({w for p in products for w, _ in _targets(p.name, p.active_ingredient)}))
    written = frozenset("".join(words).replace("'", "") for _, words, _ in named)
    return named, names, tuple(sorted({words for _, words, _ in named} - set(names))), written


@lru_cache(maxsize=4096)
def _made_up(window: tuple[str, ...]) -> bool:
    """The window is mostly a word the recogniser made up: "low remide", never "up and
    it's" nor "come down 200"."""
    odd = [
        w
        for w in window
        if len(w) >= 4 and w.replace("'", "").isalpha() and w not in _STOP and not is_english(w)
    ]
    return 2 * sum(map(len, odd)) >= sum(map(len, window))


class Named(NamedTuple):
    """What ranking reads of a product: the columns a caller names it by."""

    sku: str
    name: str
    active_ingredient: str
    keywords: str = ""


def _fuzzy_scores(products: tuple[Named, ...], query: str) -> dict[str, tuple[float, float]]:
    """Each product's best match among the windows of what was said, found (a misheard
    run counted whole) and weighed in the sentence (see `Hit.in_sentence`). Every window is
    compared with every name a product may be called by at once, in rapidfuzz's C++
    (`cdist`): a long sentence is a hundred windows against three hundred names, and
    pair by pair in Python that took 80 ms a search (docs/performance.md)."""
    tokens = _tokens(query)
    windows = sorted(_windows(tokens))
    if not windows:
        return {p.sku: (0.0, 0.0) for p in products}
    named, names, only_brands, written = _target_table(tuple(products))
    targets = [*names, *only_brands]
    column = {words: j for j, words in enumerate(targets)}
    spoken = max(len("".join(w)) for w in windows)
    covered = np.zeros((len(windows), len(targets)))
    alike = np.zeros((len(windows), len(targets)))
    # A match that explains more of what was said beats a short exact word: "omega pra
    # zole" is Omeprazole, not Omega 3.
    covered[:, : len(names)], alike[:, : len(names)] = _similarities(windows, list(names), spoken)
    # A dictionary word is what the caller said, not a brand misheard: "station" is not
    # "statin", nor "salon" Savlon. A brand is heard by its letters or sound only in
    # words the recogniser made up, or said as it is; other windows are not compared
    # with brands at all, which keeps the cost of the extra names to the few made up.
    said_brands = {words[0] for words in only_brands}
    made_up = [_made_up(w) for w in windows]
    rows = [r for r, w in enumerate(windows) if made_up[r] or "".join(w) in said_brands]
    if only_brands and rows:
        cols = np.arange(len(names), len(targets))
        some = [windows[r] for r in rows]
        part_covered, part_alike = _similarities(some, list(only_brands), spoken)
        some_made_up = np.array([made_up[r] for r in rows])[:, None]
        as_is = (
            np.array(["".join(w) for w in some], dtype=object)[:, None]
            == np.array([b[0] for b in only_brands], dtype=object)[None, :]
        )
        cells = np.ix_(np.array(rows, dtype=np.intp), cols)
        covered[cells] = part_covered
        alike[cells] = np.where(some_made_up | as_is, part_alike, 0.0)
    misheard = _misheard(tokens, written)
    # Each target's best window, read off once: a column at a time, the reads cost more
    # than the comparisons (two numpy calls per name, about 600 a search).
    found = (np.where(_whole(windows, targets, misheard), 1.0, covered) * alike).max(axis=0)
    weighed = (covered * alike).max(axis=0).tolist()
    found_best = found.tolist()
    best = [(0.0, 0.0)] * len(products)
    for i, words, weight in named:
        j = column[words]
        if j >= len(names) and not rows:
            continue  # no window was compared with the brands
        best[i] = (
            max(best[i][0], weight * found_best[j]),
            max(best[i][1], weight * weighed[j]),
        )
    # Below 0.78, a "match" is two unrelated words that share a few letters.
    return {p.sku: (b if b[0] >= 0.78 else (0.0, 0.0)) for p, b in zip(products, best, strict=True)}


def _whole(
    windows: list[tuple[str, ...]],
    targets: list[tuple[str, ...]],
    misheard: frozenset[tuple[str, ...]],
) -> np.ndarray:
    """The cells whose window is a misheard run, counted whole: the run's own row, and
    the run before a form word where `_similarities` compares it without the form word
    ("Cetlamine" of "Cetlamine lotion" against "calamine" of "Calamine Lotion")."""
    whole = np.zeros((len(windows), len(targets)), dtype=bool)
    for r, window in enumerate(windows):
        if window in misheard:
            whole[r, :] = True
        elif len(window) >= 2 and window[-1] in _FORMS and window[:-1] in misheard:
            for j, target in enumerate(targets):
                whole[r, j] = len(target) > 1 and target[-1] == window[-1]
    return whole


def _similarities(
    windows: list[tuple[str, ...]], targets: list[tuple[str, ...]], spoken: int
) -> tuple[np.ndarray, np.ndarray]:
    """For every window against every target: the share of what was said it covers
    (of `spoken`, the longest window's letters), and how alike they are
    (`_similarity`, and by sound for made-up words); 0 where their lengths rule a match
    out."""
    grams = ["".join(w) for w in windows]
    names = ["".join(t) for t in targets]
    g_len, t_len = np.array([len(g) for g in grams]), np.array([len(n) for n in names])
    covered = np.repeat((0.9 + 0.1 * np.minimum(1.0, g_len / spoken))[:, None], len(names), 1)
    letters = (
        np.maximum(
            cdist(grams, names, scorer=ratio, dtype=np.float64),
            cdist(
                [respell(g) for g in grams],
                [respell(n) for n in names],
                scorer=ratio,
                dtype=np.float64,
            ),
        )
        / 100
    )
    g_key, t_key = [phonetic_key(g) for g in grams], [phonetic_key(n) for n in names]
    sounds = np.maximum(
        cdist(g_key, t_key, scorer=ratio, dtype=np.float64),
        cdist(
            [k.lstrip("aeiou") for k in g_key],
            [k.lstrip("aeiou") for k in t_key],
            scorer=ratio,
            dtype=np.float64,
        ),
    )
    g_key_len, t_key_len = np.array([len(k) for k in g_key]), np.array([len(k) for k in t_key])
    same = (np.array(g_key, dtype=object)[:, None] == np.array(t_key, dtype=object)[None, :]) & (
        g_key_len[:, None] >= 6
    )
    alike = np.where(
        np.minimum.outer(g_key_len, t_key_len) < 4,
        letters,
        np.where(
            same, np.maximum(letters, 0.95), np.maximum(letters, (letters + sounds / 100) / 2)
        ),
    )
    made_up = [r for r, w in enumerate(windows) if _made_up(w)]
    heard = [sounds_of(windows[r]) or "" for r in made_up]
    by_sound = [j for j, t in enumerate(targets) if len(sounds_of(t) or "") >= _SOUND_MIN]
    if made_up and by_sound:
        spoken_like = cdist(
            heard, [sounds_of(targets[j]) or "" for j in by_sound], scorer=ratio, dtype=np.float64
        )
        rows, cols = np.ix_(made_up, by_sound)
        alike[rows, cols] = np.maximum(alike[rows, cols], spoken_like / 100)
    # A 4-letter gram is never a 12-letter name.
    alike[np.abs(g_len[:, None] - t_len[None, :]) > np.maximum(4, t_len // 2)[None, :]] = 0.0
    # A shared form word says nothing of which product: those few pairs are compared
    # without it, one by one.
    for r, window in enumerate(windows):
        if len(window) < 2 or window[-1] not in _FORMS:
            continue
        for j, target in enumerate(targets):
            if len(target) > 1 and target[-1] == window[-1]:
                covered[r, j], alike[r, j] = _pair(window[:-1], target[:-1], spoken)
    return covered, alike


def _misheard(tokens: list[str], catalogue_words: frozenset[str]) -> frozenset[tuple[str, ...]]:
    """The runs of words the recogniser made up, each whole, that are no name as it is:
    "Sardo" in "do you have any Sardo bread?", "Hyasine Butylromide" in "have you got
    Hyasine, Butylromide?". A run is the name as it was heard, with no other reading, so
    it is not scored on how little of the sentence it covers: at 0.9 of its likeness
    "Sardo" fell below the floor, and "bread" found the rye loaf instead of the
    sourdough asked for. Everything else still competes on its length: a name said right
    ("paracetamol or ibuprofen"), a made-up word with a word of the sentence glued to it
    ("the pravastatin" is nearer Atorvastatin than the drug alone, "deet in" nearer
    Teething Gel), and a piece of a run ("tricore" of "tricore phenamine" sounds like
    "dry cough"). Whether a name found so is sure enough to offer unasked is still
    weighed in its sentence (`Hit.in_sentence`)."""
    runs: list[list[str]] = [[]]
    for token in tokens:
        if token.replace("'", "").isalpha() and token not in _STOP and not is_english(token):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return frozenset(
        tuple(run)
        for run in runs
        if run and len(run) <= 4 and "".join(run).replace("'", "") not in catalogue_words
    )


def _pair(
    gram_words: tuple[str, ...], target_words: tuple[str, ...], spoken: int
) -> tuple[float, float]:
    """One window against one target, as `_similarities` scores them all."""
    gram, target = "".join(gram_words), "".join(target_words)
    covered = 0.9 + 0.1 * min(1.0, len(gram) / spoken)
    if abs(len(gram) - len(target)) > max(4, len(target) // 2):
        return covered, 0.0
    alike = _similarity(gram, target)
    if _made_up(gram_words):
        alike = max(alike, _sound_similarity(gram_words, target_words))
    return covered, alike


def _fts_order(db: Session, query: str) -> list[str]:
    words = content_words(query)
    if not words:
        return []
    bind = db.get_bind()
    if bind.dialect.name == "sqlite":
        # Descriptions are read by people, not matched: "a pharmacist will talk to you"
        # must not make "will" find a product.
        match = (
            "{name active_ingredient keywords} : (" + " OR ".join(f'"{w}"*' for w in words) + ")"
        )
        rows = db.execute(
            text(
                "SELECT sku FROM product_fts WHERE product_fts MATCH :q ORDER BY bm25(product_fts)"
            ),
            {"q": match},
        ).all()
        return [r[0] for r in rows]
    if bind.dialect.name == "postgresql":
        rows = db.execute(
            text(
                f"SELECT sku FROM products WHERE {PG_DOCUMENT} @@ to_tsquery('english', :q) "
                f"ORDER BY ts_rank({PG_DOCUMENT}, to_tsquery('english', :q)) DESC, sku"
            ),
            {"q": " | ".join(f"{w}:*" for w in words)},
        ).all()
        return [r[0] for r in rows]
    return []


def search_products(
    db: Session, query: str, *, limit: int = 5, min_score: float = 0.6
) -> list[Hit]:
    """The best matches first; an empty list when nothing is close enough."""
    # Ranked on the columns the names live in, and only the hits loaded whole: the
    # screen and the tools search a dozen times a turn, and building every product's
    # row each time cost more than the ranking (measured, docs/performance.md).
    named = catalogue_names(db)
    # A drug the shop lacks, named, is not matched to the nearest it holds. The screen
    # and the tools search a dozen times a turn: most words name no drug not yet seen
    # held, and skip the catalogue's names (`drugs_not_held`).
    held = _held_in(db)
    lacked = _unheld(named, query, held) if names_a_drug(_tokens(query), held) else ()
    # Nor a caller's own name ("my name is Allegra" is nobody's Fexofenadine), nor a
    # colour ("the pink ones").
    query = _without_colours(_without(query, lacked), named)
    matched = _fuzzy_scores(named, query)
    names = {sku: found for sku, (found, _) in matched.items()}
    # Named by every ingredient: "the piles cream with lidocaine and hydrocortisone" is
    # the one product of both, however alike Hydrocortisone Cream's name is.
    made = _made(named)
    whole = all_named(_tokens(query), made)
    for sku in whole:
        names[sku] = 1.0
    scores = dict(names)
    fts = _fts_order(db, query)
    for rank, sku in enumerate(fts):
        # Full-text hits rank by bm25 order, below a confident name match.
        scores[sku] = max(scores.get(sku, 0.0), 0.8 - 0.15 * rank / max(1, len(fts)))
    chosen = {sku: score for sku, score in scores.items() if score >= min_score}
    by_sku = {p.sku: p for p in db.exec(select(Product).where(col(Product.sku).in_(chosen))).all()}
    ranked = sorted(
        (
            Hit(by_sku[sku], score, names.get(sku, 0.0), _weighed(matched.get(sku)))
            for sku, score in chosen.items()
        ),
        # Equal scores: a name the caller said before a symptom's product ("Clochter
        # Masal cream for athlete's foot" is Clotrimazole, not Terbinafine), then the
        # plainer product (shorter name), so "paracetamol" finds Paracetamol before
        # Children's Paracetamol Suspension.
        key=lambda h: (
            -round(h.score, 3),
            -round(h.name_score, 3),
            len(h.product.name),
            h.product.sku,
        ),
    )
    if whole:
        # Nor is Hydrocortisone Cream, made of one of its parts, offered beside it.
        parts = {i for m in made if m.sku in whole for i in m.ingredients}
        apart = {m.sku for m in made if m.sku not in whole and of_these_only(m, parts)}
        ranked = [h for h in ranked if h.product.sku not in apart]
    if lacked:
        # What is left of "pravastatin tablets" is "tablets", and Iron Tablets is not
        # what was asked for, nor is a steroid spray for "oxymetazoline nasal spray":
        # only a product the other words name by its own words, not by a form's.
        ranked = [
            h for h in ranked if own_words_heard(h.product, query) or kind_said(h.product, query)
        ]
    return ranked[:limit]


_CATALOGUE = "models.search.catalogue"


def catalogue_names(db: Session) -> tuple[Named, ...]:
    """The catalogue's naming columns, read once per database session. A tool's or the
    screen's work is one session, and asks a dozen times: "does this line name several
    products?" searches each item of it, and asks each for a brand. Per session, not per
    process: gateways sharing one PostgreSQL see a product another one added at its
    next session, and nothing needs telling when the catalogue changes."""
    kept = db.info.get(_CATALOGUE)
    if kept is None:
        rows = db.exec(
            select(Product.sku, Product.name, Product.active_ingredient, Product.keywords)
        ).all()
        kept = db.info[_CATALOGUE] = tuple(Named(*row) for row in rows)
    return kept


def _made(named: tuple[Named, ...]) -> tuple[Made, ...]:
    return made_of(tuple((p.sku, p.active_ingredient) for p in named))


@dataclass(frozen=True, slots=True)
class NotTogether:
    """A combination the caller asked for that no product is ("ibuprofen and paracetamol
    in one tablet"): its ingredients as the catalogue writes them, the products holding
    them with more ("paracetamol and phenylephrine" are in Cold and Flu Relief, with
    caffeine), and those made of one of them alone."""

    ingredients: tuple[str, ...]
    wider: tuple[Hit, ...]
    parts: tuple[Hit, ...]


def asks_a_lacked_mix(db: Session, said: str) -> bool:
    """Whether `said` asks for a combination no product is (`not_together`), without
    looking its parts up."""
    return bool(together_lacked(_tokens(said), _made(catalogue_names(db))))


def not_together(db: Session, said: str) -> NotTogether | None:
    """The combination `said` asks for, when no product is that mix; else None."""
    named = catalogue_names(db)
    made = _made(named)
    lacked = together_lacked(_tokens(said), made)
    if not lacked:
        return None
    parts: list[Hit] = []
    for ingredient in lacked:
        # Each part on its own, as a search for it finds it first: Paracetamol, not the
        # extra pack; none for codeine, which the shop sells only in Co-codamol.
        alone = {m.sku for m in made if m.ingredients == (ingredient,)}
        found = [h for h in search_products(db, ingredient, limit=5) if h.product.sku in alone]
        parts += found[:1]
    wider = {m.sku for m in made if holding(m, lacked)}
    holders = [h for h in search_products(db, " ".join(lacked), limit=5) if h.product.sku in wider]
    return NotTogether(lacked, tuple(holders[:1]), tuple(parts))


def _unheld(
    named: tuple[Named, ...], said: str, held: set[str] | None = None
) -> tuple[Unheld, ...]:
    catalogue = tuple(t for p in named for t in (p.name, p.active_ingredient, p.keywords))
    return unheld(_tokens(said), catalogue, held)


def _without(said: str, found: tuple[Unheld, ...]) -> str:
    """`said` without the drugs `found`, what is said of them ("pravastatin 40 mg
    tablets", "oxymetazoline nasal spray", "nasal oxymetazoline": their dose and form,
    up to the next word of the sentence's own), and the caller's own name ("my name's
    Allegra")."""
    tokens = _tokens(said)
    gone = set(persons(tokens))
    for u in found:
        gone.update(range(u.start, u.end))
        after = u.end
        while after < len(tokens) and _describes(tokens[after]):
            gone.add(after)
            after += 1
        before = u.start - 1
        while before >= 0 and _describes(tokens[before]):
            gone.add(before)
            before -= 1
    if not gone:
        return said
    return " ".join(t for i, t in enumerate(tokens) if i not in gone)


def _without_colours(said: str, named: tuple[Named, ...]) -> str:
    tokens = _tokens(said)
    if _COLOURS.isdisjoint(tokens):
        return said
    pairs = {
        tuple(words[k : k + 2])
        for p in named
        for words in (_tokens(p.name), _tokens(p.keywords))
        for k in range(len(words) - 1)
    }
    kept = [
        t for k, t in enumerate(tokens) if t not in _COLOURS or tuple(tokens[k : k + 2]) in pairs
    ]
    return " ".join(kept)


def _describes(word: str) -> bool:
    """A word said with a drug's name, of that drug: its form, strength or use."""
    return word in _GENERIC or word in _FORMS or word.isdigit() or word in _STRENGTH


# How a strength is said after a name: "forty milligram", "40 mg".
_STRENGTH = frozenset("mg milligram milligrams mcg microgram micrograms ml percent".split())


@dataclass(frozen=True, slots=True)
class NotHeld:
    """The drugs the caller's words name that no product is (models/drug_names.py), and
    their first words without them, for matching to names: "make it two pravastatin"
    is "make it two", never two of Atorvastatin."""

    names: tuple[str, ...]
    rest: str


# Per database, the drug names its catalogue was read to hold: most sentences that name
# a drug name one the shop has ("ibuprofen"), and need not read the catalogue again to
# say so. A product taken out while the process runs keeps its names here, and is
# matched by likeness, as every name was before the list of drugs.
_HELD: WeakKeyDictionary[Engine, set[str]] = WeakKeyDictionary()


def _held_in(db: Session) -> set[str]:
    return _HELD.setdefault(db.get_bind().engine, set())


def drugs_not_held(db: Session, said: str, *more: str) -> NotHeld:
    """`NotHeld` of `said` and any more words said (the model's query)."""
    texts = (said, *more)
    tokens = [_tokens(t) for t in texts]
    held = _held_in(db)
    if not any(names_a_drug(t, held) for t in tokens):
        return NotHeld((), said)  # most words: the catalogue is not read
    named = catalogue_names(db)
    found = [_unheld(named, t, held) for t in texts]
    names = tuple(dict.fromkeys(u.name for f in found for u in f))
    return NotHeld(names, _without(said, found[0]))


def _weighed(match: tuple[float, float] | None) -> float | None:
    """The match in its sentence, when a misheard run counted whole made it differ."""
    if match is None or match[0] == match[1]:
        return None
    return match[1]


def says_product(product: Product, said: str) -> bool:
    """Whether the caller's words hold one of the product's own words: a word of its
    name or its ingredient ("omeprazole"), or one of its keywords ("heartburn"), whole
    but for its ending; or its name's words in a row ("sleep aid").

    A search also finds a product from a near sound ("Ompersole", "self-amatidine") or
    the start of a word ("Tram" is Tramadol); such a hit is a guess, right most of the
    time, and a guess is asked about, not offered (docs/voice.md, Product names). So is
    a product found from everyday words of its name alone (`only_everyday_words`)."""
    heard = _heard(said)
    names, keywords = _own_words(product)
    # A keyword of its own, not a word of its name, is what the caller needs it for
    # ("for my back"), said on purpose.
    if any(_said_as(h, w) for h in heard for w in keywords - names):
        return True
    if _in_a_row(product, _tokens(said)):
        return True
    # A word of its name that is everyday talk is as often chance as a request: "in
    # hand" is not Hand Sanitiser, "then to travel" not Travel Sickness Tablets. The
    # name is said by a rarer word of it, or by two different words of it.
    matched = sorted(w for w in names if any(_said_as(h, w) for h in heard))
    different: list[str] = []
    for w in matched:
        if not any(_one_word(w, v) for v in different):
            different.append(w)
    return len(different) >= 2 or any(not everyday(w) for w in matched)


def only_everyday_words(product: Product, said: str) -> bool:
    """The caller's words hold words of the product's name, all of them everyday ones,
    and without those words they do not name it at all: "come more after then to
    travel" finds Travel Sickness Tablets by its name, from a word any sentence may
    hold, while "the childrens i be pro fen" still names Children's Ibuprofen
    Suspension by sound without "childrens"."""
    heard = _heard(said)
    names, _ = _own_words(product)
    matched = [w for w in names if any(_said_as(h, w) for h in heard)]
    if not matched or not all(everyday(w) for w in matched):
        return False
    rest = " ".join(t for t in _tokens(said) if not any(_said_as(t, w) for w in matched))
    named = Named(product.sku, product.name, product.active_ingredient)
    # Weighed in the sentence, as it was measured (see `Hit.in_sentence`).
    return _fuzzy_scores((named,), rest)[product.sku][1] < 0.78


def naming_words(product: Product, said: str) -> set[str]:
    """The caller's words that name the product by a rare word of its name: "folic" for
    Folic Acid; not a keyword ("immune"), an ingredient ("acid", of Simple Linctus's
    citric acid) nor an everyday word ("simple")."""
    tokens = _tokens(product.name) + [w.replace("-", "") for w in product.name.lower().split()]
    own = {w for w in tokens if len(w) >= 4 and w not in _GENERIC | _FORMS | _STOP}
    return {h for h in _heard(said) for w in own if not everyday(w) and _said_as(h, w)}


def kind_said(product: Product, said: str) -> bool:
    """Whether the words say what the product's name says it is for ("cough syrup",
    "something for a sore throat"): beside a drug the shop lacks ("pravastatin and some
    cough syrup"), a request of its own. Its form alone ("tablets", "nasal spray") is
    what was said of the drug, and is gone with it (`NotHeld.rest`)."""
    tokens = _tokens(said)
    kinds = {w for w in _tokens(product.name) if w in _KINDS}
    return any(
        # Asked for, not told of: "and some cough syrup", "something to help me sleep";
        # "pravastatin, I can't sleep with the worry" asks for no sleep aid.
        _kind_of(token, kinds) and _ASKING_FOR.intersection(tokens[max(0, k - 6) : k])
        for k, token in enumerate(tokens)
    )


def _kind_of(word: str, kinds: set[str]) -> bool:
    """The word is one of `kinds` but for its ending: "coughs", "sleeping"; not "early"
    for "ear" nor "sunday" for "sun"."""
    return any(word in (k, f"{k}s", f"{k}ing", f"{k}y") for k in kinds)


# Words of a product's name that say what it is for, not its form: asked for on their
# own ("and some cough syrup", "something for a sore throat").
_KINDS = frozenset("cough throat cold flu eye ear nasal inhaler patches lozenges sun sleep".split())
# Said just before what is asked for.
_ASKING_FOR = frozenset("some something any anything a an bottle box pack packet help".split())


def own_words_heard(product: Product, said: str) -> set[str]:
    """The caller's words that are any of the product's own words."""
    names, keywords = _own_words(product)
    return {h for h in _heard(said) for w in names | keywords if _said_as(h, w)}


def another_of_its_kind(product: Product, said: str) -> bool:
    """Whether the caller said one of the product's own words with letters before it:
    "esomeprazole" holds "omeprazole", "levocetirizine" holds "cetirizine". Such a word
    names another drug of the same family, not this one, however close it scores."""
    names, _ = _own_words(product)
    for heard in {t.removesuffix("'s") for t in _tokens(said)}:
        if any(_said_as(heard, w) for w in names):
            continue
        # Its own word but for the ending after the letters before it: "esomeprazol".
        # Not an everyday word before it: "handsanitiser", "theibuprofen" joined.
        tails = {heard[k:] for k in (2, 3, 4) if len(heard) - k >= 5 and not everyday(heard[:k])}
        if any(len(w) >= 5 and _one_word(t, w) for t in tails for w in names):
            return True
    return False


def _heard(said: str) -> set[str]:
    """The caller's words, and runs of two or three joined: speech splits a name ("pep
    sid" for Pepcid)."""
    tokens = _tokens(said)
    heard = {"".join(tokens[i : i + n]) for n in (1, 2, 3) for i in range(len(tokens) - n + 1)}
    return heard | set(_tokens(said.replace("-", "")))


def _own_words(product: Product) -> tuple[set[str], set[str]]:
    """The words that say which product it is: of its name and first ingredient, and
    its keywords; not what kind of thing it is ("cream") nor conversation."""
    own = _tokens(f"{product.name} {_first_ingredient(product.active_ingredient)}")
    own += [w.replace("-", "") for w in product.name.lower().split() if "-" in w]
    names = {w for w in own if len(w) >= 4 and w not in _GENERIC | _FORMS | _STOP}
    keywords = {
        w for w in _tokens(product.keywords) if len(w) >= 4 and w not in _GENERIC | _FORMS | _STOP
    }
    return names, keywords


def _said_as(heard: str, own: str) -> bool:
    """The caller's word is the product's, but for its ending. An everyday word the
    caller said is only itself, or its plural: "code" is not "codeine", "lose" not
    "losec", "quite" not "quit"."""
    if heard == own or heard.removesuffix("s") == own.removesuffix("s"):
        return True
    if everyday(heard):
        return False
    # A word of the dictionary is another word, not a mishearing: only its ending may
    # differ ("constipated"), not its sound ("pack" respelled is "back").
    if is_english(heard, webster_only=True):
        return _same_stem(heard, own)
    return _one_word(heard, own)


def _in_a_row(product: Product, tokens: list[str]) -> bool:
    """The product's whole name, or two of its keywords as the catalogue gives them,
    said one after the other: "sleep aid", "plan b", "hand gel"."""
    said = {tuple(tokens[i : i + 2]) for i in range(len(tokens) - 1)}
    name = tuple(_tokens(product.name))
    if len(name) >= 2 and any(tuple(tokens[i : i + len(name)]) == name for i in range(len(tokens))):
        return True
    keywords = _tokens(product.keywords)
    return any(tuple(keywords[i : i + 2]) in said for i in range(len(keywords) - 1))


def _one_word(a: str, b: str) -> bool:
    """The same word but for its ending, as full text's stemmer takes it: "constipated"
    and "constipation", "headaches" and "headache"; never "tram" and "tramadol"."""
    return a == b or respell(a) == respell(b) or _same_stem(a, b)


def _same_stem(a: str, b: str) -> bool:
    shared = len(os.path.commonprefix([a, b]))
    return shared >= 4 and len(a) - shared <= 3 and len(b) - shared <= 3


# Biasing a recogniser with names alone makes it hear names where none were said
# (measured: "for my hay fever" became "for my Cetirizine"); the symptoms callers
# name around them keep it honest.
SYMPTOMS = (
    "headache",
    "hay fever",
    "fever",
    "cough",
    "cold",
    "flu",
    "sore throat",
    "allergy",
    "heartburn",
    "diarrhoea",
    "constipation",
    "pain",
)


def _unknown_words(text: str) -> list[str]:
    """The words of a name a recogniser cannot spell from English: "Co-codamol" and
    "Omeprazole" from "Co-codamol" and "Omeprazole 20mg", never "Cream" or "Tablets"."""
    out = []
    for word in text.split():
        word = word.strip("(),.;:")
        if (
            len(word) >= 4
            and not any(c.isdigit() for c in word)
            and not is_english(word, webster_only=True)
        ):
            out.append(word[0].upper() + word[1:])
    return out


def catalogue_vocabulary(db: Session) -> list[str]:
    """Words to bias speech recognition with, most needed first: the product names'
    words that are not English, the common symptoms, then the active ingredients'.

    Whisper takes at most 223 tokens of them (voice/stt.py keeps the first that fit).
    Whole names ("Paracetamol Extra Pack, Children's Paracetamol Suspension, …") filled
    that with the first 25 products and left the rest of the catalogue unbiased; English
    words need no bias, and every word repeated costs room another name needs."""
    products = db.exec(select(Product)).all()
    names = [w for p in products for w in _unknown_words(p.name)]
    ingredients = [
        w for p in products for w in _unknown_words(_first_ingredient(p.active_ingredient))
    ]
    words: dict[str, str] = {}
    for word in [*names, *SYMPTOMS, *ingredients]:
        words.setdefault(word.lower(), word)
    return list(words.values())
