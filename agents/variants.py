"""Which product of a family the caller means: the gel, the 400s, the children's one.

Pure functions over Product objects; no database. A family is the products one
spoken name matched ("ibuprofen": the tablets, the strong ones, the gel, the
children's suspension), best match first. The caller's words become hints
(`variant_words`), and `resolve` narrows the family by each product's own
attributes: its form, strength, pack size, the words of its name and its keywords.

Measured before: the shortest name won every tie, so "the gel", "the 400s" and
"for my toddler" all became the plain adult tablets. The rule that matters most:
words about a child never resolve to a product that is not for children.

Over ~400 lines on purpose: the spoken-number reading, the hint table and the
narrowing are one decision, tested together over the whole catalogue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from models.search import content_words
from models.shop import Product
from swarm import NUMBER_TENS, NUMBER_UNITS

# --- what the caller said -------------------------------------------------------------------

_UNITS, _TENS = NUMBER_UNITS, NUMBER_TENS
_T = "|".join(_TENS)
_U = "|".join(sorted(_UNITS, key=len, reverse=True))
# Spoken form words, each to the group a product's form is read into.
_FORM_WORDS = {
    word: group
    for entry in (
        "gel: gel gels rub; liquid: liquid suspension syrup solution linctus mixture; spray: spray "
        "sprays; tablets: tablet tablets pill pills caplet caplets; capsules: capsule capsules "
        "caps; cream: cream creams ointment; patches: patch patches; lozenges: lozenge lozenges; "
        "sachets: sachet sachets powder powders; chewable: chewable chewables chewy; soluble: "
        "effervescent fizzy soluble dissolvable dispersible; lotion: lotion; drops: drops; "
        "gum: gum; inhaler: inhaler; mouthwash: mouthwash"
    ).split("; ")
    for group, words in [entry.split(": ")]
    for word in words.split()
}
# A product's form, word by word, to the groups a caller's word may name.
_PRODUCT_FORMS = {**_FORM_WORDS, "chewing": "gum"}

_CHILD_MARKS = frozenset("child children children's childrens kids kid baby babies infant".split())
_CHILD_WORDS = frozenset(t.removesuffix("'s").removesuffix("s'") for t in _CHILD_MARKS)
_CHILD = re.compile(
    r"\b(?:toddlers?|bab(?:y|ies)|infants?|kids?|kiddies?|child(?:ren)?(?:'?s)?|newborns?|"
    r"(?:(?:my|our|your|for|for the|for my|for our) )little ones?|little (?:boy|girl)s?|junior|"
    r"p(?:a)?ediatric|months? old)\b"
)
_RELATIVE = re.compile(
    r"\b(?:son|daughter|grand(?:son|daughter|child(?:ren)?|kids?)|niece|nephew|boy|girl)s?\b"
)
_ADULT = re.compile(r"\b(?:adults?|grown ups?|for me|for myself|myself)\b")
_AGE = re.compile(
    r"\b(?P<n>\d+)\s+(?P<unit>years?|months?|weeks?)(?:\s+old)?\b"
    r"|\b(?:aged|age|is|he's|she's|who's|turns?|turned)\s+(?:only\s+|just\s+)?(?P<m>\d+)\b"
)
_STRONG = re.compile(
    r"\b(?:strong(?:er|est)?|(?:extra|maximum|max|high|full|double) strength|extra strong)\b"
)
_BIGGER = re.compile(
    r"\b(?:bigger|larger|biggest|largest|jumbo|value|economy)\b|\bfamily (?:pack|size)\b"
    r"|\b(?:big|large)\s+(?:\w+\s+)?(?:pack|packs|box|boxes|packet|size|one|ones)\b"
)
_SMALLER = re.compile(
    r"\b(?:smaller|smallest)\b|\b(?:small|little)\s+(?:\w+\s+)?(?:pack|packs|box|boxes|packet|size)\b"
)
_PLAIN = re.compile(r"\b(?:normal|regular|standard|ordinary|plain|basic|usual|original)\b")
# "No" is left out: "no, the gel one" asks for the gel.
_NEGATED = re.compile(
    r"\b(?:not|don'?t want|instead of|rather than)\s+(?:the\s+|a\s+|an\s+)?"
    r"(?:for\s+(?:my\s+|the\s+|a\s+)?)?[\w']+(?:\s+ones?)?"
)
_STRENGTH = re.compile(r"\b(?P<n>\d+)\s*(?:mg|milligrams?|milli ?grams?|mgs)\b")
_PACK = re.compile(
    r"\b(?:pack|packs|box|boxes|packet|packets|bottle)\s+of\s+(?P<a>\d+)\b"
    r"|(?:\b(?P<pre>the|a|that|those|these|with)\s+)?\b(?P<b>\d+)\s+"
    r"(?P<unit>pack|packs|tablets?|capsules?|caps|sachets?|patches|lozenges|pills?|count)\b"
    r"|\bwith (?P<c>\d+) in (?:it|them|the (?:pack|box))\b"
)
# Words after a number that make it a quantity or an age, not a variant.
_NOT_VARIANT_AFTER = frozenset(
    "of box boxes pack packs packet packets bottle bottles tube tubes more year years month "
    "months week weeks old mg milligram milligrams tablets tablet capsules pills".split()
)
_NOT_VARIANT_BEFORE = frozenset("is aged age turns turned he's she's who's".split())
_FILLERS = re.compile(r"\b(?:um+|uh+|erm+|er|hmm+|ah+)\b")
_CONVERSATION = frozenset("pack packs relief treatment remedy one ones".split())


@dataclass(frozen=True, slots=True)
class VariantHints:
    """What the caller's words say about the variant; None or False when they say nothing."""

    form: str | None = None  # a form group: gel, liquid, spray, tablets, capsules, cream...
    strength_mg: int | None = None
    audience: str | None = None  # "child", "adult", or "unsure" (a son, no age given)
    strong: bool = False
    pack: str | None = None  # "bigger" or "smaller"
    pack_size: int | None = None
    plain: bool = False  # "the normal ones"
    # The number was said bare ("the 32", "the 400s"): strength_mg or pack_size holds a
    # guess, and `resolve` reads it as the other when only the other fits a product.
    bare: bool = False
    text: str = ""  # the words, lower case, numbers as digits, negated words left out

    @property
    def given(self) -> bool:
        """Whether the words say anything that sets one variant apart."""
        said = (self.form, self.strong, self.pack, self.plain, self.audience in ("child", "adult"))
        return any(said) or self.strength_mg is not None or self.pack_size is not None


def spoken_to_digits(text: str) -> str:
    """ "four hundred" → "400", "thirty two" → "32", "two hundred and fifty" → "250"; a lone
    "one" stays a word ("the gel one"), and "two four hundreds" is 2 of the 400s."""
    out: list[str] = []
    # Each number is [tens] [unit] [hundred] [and] [tens] [unit]; a plural ends it.
    pattern = re.compile(
        rf"\b(?=\w)(?:(?P<h>{_U}) hundred(?P<hs>s)?(?: and)?)?\s*(?(hs)|(?:\b(?P<t>{_T})(?P<ts>s)?)?)"
        rf"\s*(?(hs)|(?(ts)|(?:\b(?P<u>{_U})(?P<us>s)?)?))\b"
    )

    def value(match: re.Match[str]) -> str:
        if not match.group(0).strip() or match.group(0).strip() in ("one", "ones"):
            return match.group(0)
        n = sum(
            _UNITS.get(match.group(g) or "", 0) * k + _TENS.get(match.group(g) or "", 0)
            for g, k in (("h", 100), ("t", 1), ("u", 1))
        )
        plural = any(match.group(g) for g in ("hs", "ts", "us"))
        return f" {n}{'s' if plural else ''} "

    for part in text.split(","):
        out.append(" ".join(pattern.sub(value, part).split()))
    return ", ".join(out)


def _age_audience(text: str) -> str | None:
    for match in _AGE.finditer(text):
        n = int(match.group("n") or match.group("m"))
        unit = match.group("unit") or "years"
        if not unit.startswith("year") or n < 12:
            return "child"
        return "adult" if n >= 16 else "unsure"
    return None


def variant_words(said: str) -> VariantHints:
    """The variant hints in what the caller said."""
    text = _FILLERS.sub(" ", said.lower().replace("’", "'"))
    text = spoken_to_digits(re.sub(r"[^\w'\s]|_", " ", text.replace("-", " ")))
    # "not the children's one": a negated word must not count as asked for.
    text = " ".join(_NEGATED.sub(" ", text).split())
    words = text.split()
    form = next((_FORM_WORDS[w] for w in words if w in _FORM_WORDS), None)
    # A child wins over an adult word: the safe reading when both are heard.
    audience = (
        "child"
        if _CHILD.search(text)
        else _age_audience(text)
        or ("adult" if _ADULT.search(text) else "unsure" if _RELATIVE.search(text) else None)
    )
    strength = next((int(m.group("n")) for m in _STRENGTH.finditer(text)), None)
    pack_size = None
    for match in _PACK.finditer(text):
        n = int(match.group("a") or match.group("b") or match.group("c"))
        # "2 tablets" is a quantity; "the 16 tablets" and "32 tablets" are a pack.
        # "30 packs" is a quantity past the limit, which the order refuses by name.
        many = match.group("unit") == "packs" and not match.group("pre")
        if (match.group("a") or match.group("c") or match.group("pre") or n > 12) and not many:
            pack_size = n
            break
    bare = False
    if strength is None and pack_size is None:
        number = _bare_number(words)
        if number is not None:
            n, plural = number
            bare = True
            # A guess: "the 400s" is a strength, "the 32" a pack; resolve may swap them.
            if plural or n >= 100:
                strength = n
            else:
                pack_size = n
    return VariantHints(
        form=form,
        strength_mg=strength,
        audience=audience,
        strong=bool(_STRONG.search(text)),
        pack="bigger" if _BIGGER.search(text) else "smaller" if _SMALLER.search(text) else None,
        pack_size=pack_size,
        plain=bool(_PLAIN.search(text)),
        bare=bare,
        text=text,
    )


def _bare_number(words: list[str]) -> tuple[int, bool] | None:
    """A number said without a unit that names a variant: "the 32", "the 400s",
    "ibuprofen 400"; not a quantity ("2 paracetamol", "2 of them") or an age."""
    for i, word in enumerate(words):
        match = re.fullmatch(r"(\d+)(s?)", word)
        if match is None:
            continue
        pre = words[i - 1] if i > 0 else ""
        post = words[i + 1] if i + 1 < len(words) else ""
        if post in _NOT_VARIANT_AFTER or pre in _NOT_VARIANT_BEFORE:
            continue
        plural = bool(match.group(2))
        named = pre in ("the", "those", "that", "these") or bool(content_words(pre))
        if plural or named or post in ("", "please", "one", "ones", "then", "thanks"):
            return int(match.group(1)), plural
    return None


def is_variant_word(word: str) -> bool:
    """Whether a word names a variant, not a product: "gel", "strong", "children's", "400s"."""
    return variant_words(word).given


# --- what the products are -------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower().replace("’", "'"))


def _word(token: str) -> str:
    return token.removesuffix("'s").removesuffix("s'")


def audience_of(product: Product) -> str:
    """ "child" when its name or keywords say it is for children; "any" for what is no
    medicine (a thermometer, plasters) or says all ages; "adult" otherwise."""
    marks = {_word(t) for t in _tokens(f"{product.name} {product.keywords}")}
    if marks & _CHILD_WORDS or "toddler" in marks:
        return "child"
    if not product.active_ingredient.strip() or "all ages" in product.description.lower():
        return "any"
    return "adult"


def form_groups(product: Product) -> frozenset[str]:
    """The groups its form belongs to: "chewable tablets" is tablets and chewable."""
    return frozenset(_PRODUCT_FORMS[w] for w in _tokens(product.form) if w in _PRODUCT_FORMS)


def strength_mg(product: Product) -> float | None:
    """Its strength in milligrams, the first figure ("100 mg per 5 ml" → 100)."""
    match = re.search(r"(\d+(?:\.\d+)?)\s*(mg|g)\b", product.strength)
    if match is None:
        return None
    return float(match.group(1)) * (1000 if match.group(2) == "g" else 1)


def _is_strong(product: Product) -> bool:
    return bool(_STRONG.search(f"{product.name} {product.keywords}".lower()))


# --- choosing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resolution:
    product: Product | None  # the one product meant, when it is clear
    options: tuple[Product, ...] = ()  # when unclear: at most 3 to ask about


def plain_of(candidates: Sequence[Product]) -> Product | None:
    """The family's plain product: the name the others extend ("Ibuprofen" of "Ibuprofen
    Strong"), not for children only; None when no name is inside another."""
    names = {p.sku: set(_tokens(p.name)) for p in candidates}
    counts = {
        p.sku: sum(1 for q in candidates if q.sku != p.sku and names[p.sku] < names[q.sku])
        for p in candidates
    }
    best = max(counts.values(), default=0)
    plain = [p for p in candidates if counts[p.sku] == best]
    if best == 0 or len(plain) != 1 or audience_of(plain[0]) == "child":
        return None
    return plain[0]


def _distinctive(product: Product, base: set[str]) -> set[str]:
    """Words of its name that set it apart ("strong", "low dose"); child words are
    read as the audience instead."""
    return {
        _word(t)
        for t in _tokens(product.name)
        if t not in base and t not in _CONVERSATION and _word(t) not in _CHILD_WORDS
    }


Check = Callable[[Product], bool]


def resolve(candidates: Sequence[Product], said: str) -> Resolution:
    """The product of `candidates` the caller's words pick, or up to three to ask about."""
    family = list({p.sku: p for p in candidates}.values())
    if not family:
        return Resolution(None)
    hints = variant_words(said)
    plain = plain_of(family)
    names = [set(_tokens(p.name)) for p in family]
    base = set(_tokens(plain.name)) if plain else set.intersection(*names)
    # "extra strength" asks for strength, not for the Extra Pack.
    heard = {_word(t) for t in _tokens(_STRONG.sub(" strong ", hints.text))}
    named = [(len(own), p) for p in family if (own := _distinctive(p, base)) and own <= heard]
    if named:
        most = max(n for n, _ in named)
        pool = [p for n, p in named if n == most]
    else:
        # A product matched by ingredient alone ("Cold and Flu Relief" for paracetamol)
        # is chosen only by its own name, never by a form or a strength.
        pool = [p for p, words in zip(family, names, strict=True) if base <= words]
    checks = _checks(hints, family, plain)
    for check in checks:
        narrowed = [p for p in pool if check(p)]
        if not narrowed:
            return Resolution(None, _closest(family, checks, hints))
        pool = narrowed
    if len(pool) == 1:
        return Resolution(pool[0])
    # Several fit and differ only in what was not said: a bare "ibuprofen" (or
    # "ibuprofen tablets") is the plain one, unless the words may be about a child.
    unsure = hints.audience == "unsure" and any(audience_of(p) == "child" for p in pool)
    if plain is not None and plain in pool and not unsure:
        return Resolution(plain)
    if unsure:
        # A son of unknown age: the question must offer the children's product.
        pool.sort(key=lambda p: (p is not plain, audience_of(p) != "child"))
    return Resolution(None, tuple(pool[:3]))


def _checks(hints: VariantHints, family: list[Product], plain: Product | None) -> list[Check]:
    checks: list[Check] = []
    if hints.audience == "child":
        has_child = any(audience_of(p) == "child" for p in family)
        # Never an adult product; one for any age only when none is made for children.
        wanted = "child" if has_child else "any"
        checks.append(lambda p: audience_of(p) == wanted)
    elif hints.audience == "adult":
        checks.append(lambda p: audience_of(p) != "child")
    if hints.form:
        # "Sun cream" is a lotion: a form word in the product's own name counts too.
        checks.append(
            lambda p: (
                hints.form in form_groups(p)
                or hints.form in {_FORM_WORDS.get(t) for t in _tokens(p.name)}
            )
        )
    number = hints.strength_mg if hints.strength_mg is not None else hints.pack_size
    in_names = {t for p in family for t in _tokens(p.name)}
    if hints.bare and number is not None and str(number) not in in_names:
        by_strength = {p.sku for p in family if strength_mg(p) == number}
        by_pack = {p.sku for p in family if p.pack_size == number}
        guess, other = (
            (by_strength, by_pack) if hints.strength_mg is not None else (by_pack, by_strength)
        )
        chosen = guess or other
        # A small bare number that fits nothing was a quantity ("I'll take 2 then").
        if chosen or number > 12 or hints.strength_mg is not None:
            checks.append(lambda p: p.sku in chosen)
    elif not hints.bare:
        if hints.strength_mg is not None:
            checks.append(lambda p: strength_mg(p) == hints.strength_mg)
        if hints.pack_size is not None:
            checks.append(lambda p: p.pack_size == hints.pack_size)
    if hints.strong:
        checks.append(_strong_check(family))
    if hints.pack:
        checks.append(_pack_check(hints.pack, family, plain))
    if hints.plain and plain is not None:
        checks.append(lambda p: p.sku == plain.sku)
    return checks


def _strong_check(family: list[Product]) -> Check:
    named = {p.sku for p in family if _is_strong(p)}
    if named:
        return lambda p: p.sku in named
    # No product says strong: the highest strength of a form, when strengths differ.
    strongest: set[str] = set()
    for group in {g for p in family for g in form_groups(p)}:
        same = [p for p in family if group in form_groups(p) and strength_mg(p) is not None]
        values = sorted({mg for p in same if (mg := strength_mg(p)) is not None})
        top = [p for p in same if values and strength_mg(p) == values[-1]]
        if len(values) > 1 and len(top) == 1:
            strongest.add(top[0].sku)
    return lambda p: p.sku in strongest


def _pack_check(direction: str, family: list[Product], plain: Product | None) -> Check:
    """A bigger (smaller) pack of the same kind as the plain product, or of the family's
    smallest (largest) pack when it has no plain one."""
    bigger = direction == "bigger"
    reference = plain or (min if bigger else max)(family, key=lambda p: p.pack_size)
    groups = form_groups(reference)
    same = [p for p in family if form_groups(p) & groups or p.form == reference.form]
    sizes = [p.pack_size for p in same if (p.pack_size > reference.pack_size) == bigger]
    sizes = [n for n in sizes if n != reference.pack_size]
    target = (max if bigger else min)(sizes, default=None)
    if target is None and not bigger and any(p.pack_size != reference.pack_size for p in same):
        # "The smaller pack" when the plain one is the smallest of its kind: that one.
        # Measured before: no pack fitted, and the caller was asked which again.
        target = reference.pack_size
    fits = {p.sku for p in same if p.pack_size == target}
    return lambda p: p.sku in fits


def _closest(
    family: list[Product], checks: list[Check], hints: VariantHints
) -> tuple[Product, ...]:
    """Up to three that fit most of the words, best match first; never an adult product
    when the words were about a child, nor a children's one when about an adult."""
    allowed = family
    if hints.audience == "child":
        allowed = [p for p in family if audience_of(p) != "adult"]
    elif hints.audience == "adult":
        allowed = [p for p in family if audience_of(p) != "child"]
    ranked = sorted(allowed, key=lambda p: -sum(1 for check in checks if check(p)))
    return tuple(ranked[:3])
