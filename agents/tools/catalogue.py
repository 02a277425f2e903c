"""Finding products. Outputs are plain sentences the agent can say as they are.

Past 400 lines because the search's whole decision (one product offered, asked about,
or listed; `answer_search`) reads only side by side with the rules it applies: what
counts as a guess, and which other products the caller named."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from pydantic import BaseModel, Field
from rapidfuzz.fuzz import ratio
from rapidfuzz.process import cdist
from sqlalchemy import func
from sqlmodel import Session, col, select

from agents.deps import pharmacy
from agents.guards import grounded
from agents.heard import ORDER_IT, did_you_say
from agents.items import Wanted, known_words, split_items
from agents.speech import describe, spoken_list
from agents.transcript import heard_as_names
from agents.variants import resolve, variant_words
from models.search import (
    Hit,
    Named,
    another_of_its_kind,
    catalogue_names,
    content_words,
    drugs_not_held,
    kind_said,
    naming_words,
    not_together,
    only_everyday_words,
    own_words_heard,
    says_product,
    search_products,
)
from models.shop import Product
from swarm import ToolContext, ToolError

log = logging.getLogger("agents.catalogue")

# How close a heard word must be to a brand keyword ("immodium" is Imodium); shorter
# words must match exactly, or "stuff" would be a brand of "stuffy" nose sprays.
BRAND_SCORE = 85
_NOT_BRANDS = frozenset("please thanks some boxes packs bottles tablets the and".split())
# "Morning, ..." opens a call: such a keyword is a brand only with the word after it
# ("morning after").
_GREETINGS = frozenset("morning afternoon evening".split())

# A name the caller said resolves to a product only when the match is this close.
RESOLVE_SCORE = 0.75
# A product found from a name below this closeness is asked about, not offered.
GUESS_SCORE = 0.85
# Products of two ingredients found as close as this (the same words found both) are
# both offered.
TIE_SCORE = 0.001


class SearchQuery(BaseModel):
    query: str = Field(
        min_length=2,
        description="What the caller asked for, in their own words: a product name or a symptom.",
    )


class ProductName(BaseModel):
    product: str = Field(min_length=2, description="The product name as the caller said it.")


def find_product(db: Session, name: str) -> Product | None:
    """The product `name` clearly names, by its name or ingredient; None otherwise.
    Never for a drug the shop lacks: "oxymetazoline nasal spray" is not whichever nasal
    spray is left."""
    if drugs_not_held(db, name).names:
        return None
    hits = [h for h in search_products(db, name, limit=5) if h.name_score >= RESOLVE_SCORE]
    hits.sort(key=lambda h: (-round(h.name_score, 3), len(h.product.name)))
    return hits[0].product if hits else None


def family(db: Session, name: str) -> list[Product]:
    """The products `name` matches by their own name or ingredient, best first: for
    "ibuprofen" the tablets, the strong ones, the gel and the children's suspension."""
    return [h.product for h in _family_hits(db, name)]


def _family_hits(db: Session, name: str) -> list[Hit]:
    hits = [h for h in search_products(db, name, limit=8) if h.name_score >= RESOLVE_SCORE]
    if not hits:
        # Speech splits long names ("nap rox en", "cetra zine"): try them joined.
        joined = _joined_name(db, name)
        if joined is not None:
            hits = [
                h for h in search_products(db, joined, limit=8) if h.name_score >= RESOLVE_SCORE
            ]
    hits.sort(key=lambda h: (-round(h.name_score, 3), len(h.product.name)))
    return hits


def _pointed_to(db: Session, said: str, rivals: list[Product]) -> list[Product]:
    """Of drugs found equally by name, those the caller's other words point to: a brand
    ("beconase nasal spray"), else a word of the product's own name that the others do
    not share ("two eye drops, the lubricating ones"); all of them when the words
    point to none or to several. Not a keyword: "my eyes are all gunky" is a keyword of
    the lubricating drops, and was said for the antibiotic ones."""
    if not rivals:
        return []
    brands = {ingredient(p) for p in brand_family(db, said)}
    chosen = [p for p in rivals if ingredient(p) in brands]
    if not chosen:
        heard = set(re.findall(r"[a-z0-9']+", said.lower()))
        names = [set(re.findall(r"[a-z0-9']+", p.name.lower())) for p in rivals]
        shared = set.intersection(*names)
        chosen = [p for p, own in zip(rivals, names, strict=True) if (own - shared) & heard]
    return chosen or rivals


def _rivals(hits: list[Hit]) -> list[Product]:
    """The best product of each ingredient found as closely as the best of all, when
    there are two or more: "Xylontazeline nasal spray" finds both nasal sprays by the
    form alone, and which drug it is, is not for the shorter name to decide."""
    if not hits:
        return []
    best: dict[str, Product] = {}
    for hit in hits:
        if hit.name_score >= hits[0].name_score - TIE_SCORE:
            best.setdefault(ingredient(hit.product), hit.product)
    return list(best.values()) if len(best) > 1 else []


def _joined_name(db: Session, said: str) -> str | None:
    heard = re.findall(r"[a-z0-9']+", drugs_not_held(db, said).rest.lower())
    windows = [
        w
        for w in {"".join(heard[i : i + n]) for n in (2, 3) for i in range(len(heard) - n + 1)}
        if len(w) >= 6
    ]
    names = _long_name_words(catalogue_names(db))
    if not windows or not names:
        return None
    # Every window against every word at once, in rapidfuzz's C++: a long line is a
    # hundred windows against a hundred and fifty words. Of words found equally close,
    # the last in order, as the pairs' `max` chose before.
    closest = cdist(windows, names, scorer=ratio, dtype=np.float64).max(axis=0)
    if closest.max() < BRAND_SCORE:
        return None
    return names[int(np.flatnonzero(closest == closest.max())[-1])]


@lru_cache(maxsize=8)
def _long_name_words(rows: tuple[Named, ...]) -> tuple[str, ...]:
    return tuple(
        sorted(
            {
                w
                for row in rows
                for w in re.findall(r"[a-z]+", f"{row.name} {row.active_ingredient}".lower())
                if len(w) >= 6
            }
        )
    )


def ingredient(product: Product) -> str:
    return _first_ingredient(product.active_ingredient)


def _first_ingredient(active_ingredient: str) -> str:
    return active_ingredient.split(",")[0].split(" and ")[0].strip().lower()


def brand_family(db: Session, name: str) -> list[Product]:
    """Products a brand name stands for ("imodium", "tylenol"), from their keywords.

    A keyword counts as a brand only when it is in a few products of one ingredient, so
    a symptom is not a brand; the rarest such word wins. Heard words match it closely,
    joined when speech split them ("clare it in", "gavis con"). Measured before:
    "claritin for my hay fever" found nothing, because "fever" is in many products'
    keywords."""
    # A drug the shop lacks is no brand of one it holds: "nystatin" is not "statin".
    said_words = re.findall(r"[a-z0-9']+", drugs_not_held(db, name).rest.lower())
    heard = [w for w in said_words if w not in _NOT_BRANDS]
    said = {"".join(heard[i : i + n]) for n in (1, 2, 3) for i in range(len(heard) - n + 1)}
    said = {w for w in said if len(w) >= 5}
    if not said:
        return []
    brands = [
        found
        for word, found, greeting in _brand_words(catalogue_names(db))
        if word.replace("-", "") in said
        or word.removesuffix("s") in said  # "a sachet"
        # A greeting's pair is said as it is: matched loosely, "morning, i'm after ..."
        # was "morningafter", and a caller after fibre was offered the pill.
        or not greeting
        and any(len(w) >= 7 and ratio(word, w) >= BRAND_SCORE for w in said)
    ]
    if not brands:
        return []
    rarest = min(brands, key=len)
    skus = [sku for sku, _ in sorted(rarest, key=lambda row: len(row[1]))]
    rows = {p.sku: p for p in db.exec(select(Product).where(col(Product.sku).in_(skus)))}
    return [rows[sku] for sku in skus]


@lru_cache(maxsize=8)
def _brand_words(
    rows: tuple[Named, ...],
) -> tuple[tuple[str, tuple[tuple[str, str], ...], bool], ...]:
    """The keywords that may be brands, each with its products (sku, name) and whether
    it is a greeting's pair ("morningafter"): a keyword in a few products of one
    ingredient, and in no other drug's name. Built once per catalogue, not per ask."""
    holders: dict[str, list[tuple[str, str, str]]] = {}
    # A word in the names of several drugs is what they are, not a brand: "cream" is a
    # keyword of one cream, and the form of seven more.
    named: dict[str, set[str]] = {}
    greeted: set[str] = set()
    for row in rows:
        for word in row.name.lower().split():
            named.setdefault(word, set()).add(_first_ingredient(row.active_ingredient))
        words = row.keywords.lower().split()
        pairs = {a + b for a, b in zip(words, words[1:], strict=False) if a in _GREETINGS}
        greeted |= pairs
        for word in {w for w in words if w not in _GREETINGS} | pairs:
            if len(word) >= 5:
                holders.setdefault(word, []).append((row.sku, row.name, row.active_ingredient))
    return tuple(
        (word, tuple((sku, name) for sku, name, _ in found), word in greeted)
        for word, found in holders.items()
        if len(found) <= 4
        and len(named.get(word, ())) <= 1
        and len({_first_ingredient(active) for _, _, active in found}) == 1
    )


def choose_product(
    db: Session, names: list[str], said: str, currency: str = "USD", *, whole: str | None = None
) -> Product | str | None:
    """The product the caller means, from the first of `names` that matches any; the
    variant is picked by the caller's words (form, strength, pack, who it is for).

    Returns a short question when the words fit several products, and None when no
    name matches. Measured before: "the gel", "the 400s" and "for my toddler" all
    became the plain adult tablets, because the shortest name won every tie."""
    choice = choose_products(db, names, said, whole=whole)
    if isinstance(choice, list):
        return _found([Hit(p, 1.0) for p in choice], currency)
    return choice


def choose_products(
    db: Session, names: list[str], said: str, *, whole: str | None = None
) -> Product | list[Product] | str | None:
    """`choose_product`, with the products to choose from as they are, not asked.
    `whole`: the sentence `said` is one item of, whose other words may say which of
    two drugs found equally is meant ("one of the eye drops, no wait, make it two, the
    lubricating ones")."""
    for name in names:
        if drugs_not_held(db, name).names:
            continue  # see `find_product`
        exact = db.exec(select(Product).where(func.lower(Product.name) == name.strip().lower()))
        named = exact.first()
        if named is not None and not variant_words(said).given:
            return named  # a product's own name, as just offered: nothing to resolve
        hits = _family_hits(db, name)
        candidates = [h.product for h in hits] or brand_family(db, name)
        if not candidates:
            continue
        if named is None and (rivals := _pointed_to(db, whole or said, _rivals(hits))):
            if len(rivals) > 1:
                return rivals[:3]
            candidates = [p for p in candidates if ingredient(p) == ingredient(rivals[0])]
        # One ingredient's products: "cetra zine" is Cetirizine, and Sertraline, a near
        # sound of another drug, is no variant of it to ask about.
        first = ingredient(candidates[0])
        candidates = [p for p in candidates if ingredient(p) == first]
        resolution = resolve(candidates, f"{said} {name}" if name != said else said)
        if resolution.product is not None:
            return resolution.product
        if resolution.options:
            return list(resolution.options[:3])
        return _no_variant(candidates[0])
    return None


def several_products(db: Session, said: str) -> list[Wanted]:
    """The items of `said` when they name two or more different products; else [].

    Items of one ingredient ("paracetamol, the 32 pack, three boxes of those") are one
    product and its variant, said in pieces: one item, resolved from the whole sentence."""
    names, known = _item_words(catalogue_names(db))
    items = split_items(said, names, known)
    if len(items) < 2:
        return []
    skus: set[str] = set()
    ingredients: set[str] = set()
    for item in items:
        found = family(db, item.words) or brand_family(db, item.words)
        if found:
            skus.add(found[0].sku)
            ingredients.add(ingredient(found[0]))
        # Two products of two drugs settle it: the items after them are not searched.
        if len(skus) > 1 and len(ingredients) > 1:
            return items
    return []


@lru_cache(maxsize=8)
def _item_words(rows: tuple[Named, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The names, and every word a product is named by: once per catalogue, not per line."""
    names = tuple(row.name for row in rows)
    return names, known_words([*names, *(f"{r.active_ingredient} {r.keywords}" for r in rows)])


def _no_variant(product: Product) -> str:
    return (
        f"I'm sorry, we don't have {product.name} in that form. A pharmacist can advise "
        "what suits. Would you like something else?"
    )


def resolve_product(db: Session, name: str) -> Product:
    product = find_product(db, name)
    if product is None:
        lacked = drugs_not_held(db, name).names
        if lacked:
            raise ToolError(f"I'm sorry, we don't stock {' or '.join(lacked)}. {NOT_STOCKED}")
        raise ToolError(f"I couldn't find a product called {name}. Which product do you mean?")
    return product


def _found(hits: list[Hit], currency: str) -> str:
    if len(hits) == 1:
        return f"We have {describe(hits[0].product, currency)}. Would you like to order it?"
    listed = "; ".join(describe(h.product, currency) for h in hits)
    return f"We have {len(hits)} options: {listed}. Which one would you like?"


async def search(ctx: ToolContext, params: SearchQuery) -> str:
    said = await ctx.session.get_last_user_message() or ""
    # A query the caller never said came from the prompt's examples: use their words.
    query = params.query if grounded(params.query, said) else said
    return await search_words(ctx, query)


async def search_words(ctx: ToolContext, query: str) -> str:
    if not content_words(query):
        return "What are you looking for? You can name a product or describe a symptom."
    shop = pharmacy(ctx)
    said = await ctx.session.get_last_user_message() or query
    answer = await shop.run(lambda db: answer_search(db, query, said, shop.shop.currency))
    if answer.asked:
        log.info("name_asked client_id=%s product=%r", ctx.client_id, answer.products[0].name)
    return answer.text


@dataclass(frozen=True)
class SearchAnswer:
    """What a search says: the products it names, whether the one named is asked about
    first ("did you say ...?"), and the words."""

    text: str
    products: tuple[Product, ...] = ()
    asked: bool = False


def answer_search(db: Session, query: str, said: str, currency: str) -> SearchAnswer:
    """The answer to a search for `query`, the caller having said `said`: one product
    offered, or asked about when it is a guess, a list, or a question. The search tool's
    whole decision, and what `benchmarks/product_names.py` counts.

    A drug the caller named that no product is ("pravastatin") is said to be one the
    shop does not stock: before the products their other words name ("pravastatin or
    ibuprofen"), or instead of any found without those words."""
    together = not_together(db, said)
    if together is not None:
        # Never one part offered as the whole ("Nuromol" is not Paracetamol), nor a wider
        # mix as that one: the caller hears what each product is, and chooses.
        alone = " alone" if together.wider else ""
        lacking = (
            f"I'm sorry, we don't stock {spoken_list(together.ingredients)}{alone} in one product."
        )
        choices = [*together.wider, *together.parts]
        if not choices:
            return SearchAnswer(f"{lacking} {NOT_STOCKED}")
        return SearchAnswer(
            f"{lacking} {_found(choices, currency)}", tuple(h.product for h in choices)
        )
    answer = _answer_search(db, query, said, currency)
    # Apart: joined, "f-a-m ... r" spelled twice would read as one word.
    lacked = drugs_not_held(db, said, query)
    if not lacked.names:
        return answer
    lacking = f"we don't stock {' or '.join(lacked.names)}"
    if any(says_product(p, lacked.rest) or kind_said(p, lacked.rest) for p in answer.products):
        return SearchAnswer(f"I'm sorry, {lacking}. {answer.text}", answer.products, answer.asked)
    return SearchAnswer(f"I'm sorry, {lacking}. {NOT_STOCKED}")


# After a drug the shop does not stock: a pharmacist, not the search, may say what
# else would do.
NOT_STOCKED = "A pharmacist can advise on an alternative. Can I help with anything else?"


def _answer_search(db: Session, query: str, said: str, currency: str) -> SearchAnswer:
    if variant_words(query).given:
        # "the paracetamol liquid for a toddler": the variant, not the plain tablets.
        choice = choose_products(db, [query], query)
        if isinstance(choice, Product):
            return _one(choice, guessed_from(db, choice, said), currency)  # "lorra mide capsules"
        if isinstance(choice, list) and len(choice) == 1:
            # The nearest to a form the caller asked for: as much a guess as any.
            return _one(choice[0], guessed_from(db, choice[0], said), currency)
        if isinstance(choice, list):
            return SearchAnswer(_found([Hit(p, 1.0) for p in choice], currency), tuple(choice))
        if isinstance(choice, str):
            return SearchAnswer(choice)
    hits = search_products(db, query, limit=3)
    if not hits:
        if len(query.split()) > 4:
            # A sentence read back sounds like a parrot, and repeats whatever was in it.
            return SearchAnswer(
                "I'm sorry, I can't find that. Could you tell me the product's name?"
            )
        return SearchAnswer(
            f"I'm sorry, I can't find anything for {query}. Could you describe it another way?"
        )
    short = shortlist(hits)
    if len(short) == 1:
        short += named_besides(short[0], hits[1:], said)
    hits = short
    if len(hits) == 1:
        # Judged on what the caller said, not the model's query: "lorra mide" alone is
        # closer to Loperamide than the sentence it was said in, and the model's own
        # spelling would hide the guess.
        hit = hits[0]
        guess = guessed(hit, said) if said == query else guessed_from(db, hit.product, said)
        return _one(hit.product, guess, currency)
    return SearchAnswer(_found(hits, currency), tuple(h.product for h in hits))


def _one(product: Product, guess: bool, currency: str) -> SearchAnswer:
    if guess:
        return SearchAnswer(did_you_say(product.name), (product,), asked=True)
    return SearchAnswer(_found([Hit(product, 1.0)], currency), (product,))


def shortlist(hits: list[Hit]) -> list[Hit]:
    """The hits a search offers: a confident name match alone, without look-alikes."""
    if hits and hits[0].score >= 0.9 and (len(hits) == 1 or hits[1].score < hits[0].score):
        return hits[:1]
    return hits


def named_besides(top: Hit, rest: list[Hit], said: str) -> list[Hit]:
    """Other hits the caller's words name by a rare word of their name that says
    nothing of `top`: "Have you got Co-codamole, Ibuprofen" names two products, and
    offering the one the search ranks first answers half of it. Not a product found by
    a keyword or an ingredient ("loratadine for hives" is not also Cetirizine), nor
    one named by the same words as `top` ("ibuprofen gel"), nor any in words read as
    the recogniser's list of names (`heard_as_names`), whose names are guesses. A word
    names one product, the best ranked, or those tied for it: "loratadine and ibuprofen"
    is the ibuprofen tablets, not the gel too; "loperamide and nicotine" the gum and
    the patches."""
    if heard_as_names(said) or not says_product(top.product, said):
        return []
    taken = own_words_heard(top.product, said)
    named: list[Hit] = []
    by: dict[str, float] = {}  # each naming word, and the score of the hit it named
    for hit in rest:
        words = naming_words(hit.product, said) - taken
        # A tie is not a choice: "nicotine" names the gum and the patches alike.
        if any(round(by.get(w, hit.score), 3) == round(hit.score, 3) for w in words):
            named.append(hit)
            for word in words:
                by.setdefault(word, hit.score)
    return named


def guessed(hit: Hit, said: str) -> bool:
    """A hit found from no word the caller said, but from the start of one ("tram" for
    Tramadol) or a sound not close to the name ("Loramide" for Loperamide), or from
    words that read like the recogniser's list of names (`heard_as_names`): asked
    about before it is offered.

    Measured on recognised speech (docs/voice.md, Product names): of single hits not
    named in the caller's words, a fifth were another product than the one said; below
    GUESS_SCORE most of those were, and few of the right ones."""
    if heard_as_names(said):
        return True
    if says_product(hit.product, said):
        return False
    if another_of_its_kind(hit.product, said) or only_everyday_words(hit.product, said):
        return True
    by_name = hit.name_score > 0 and hit.name_score >= hit.score
    return not by_name or hit.sure < GUESS_SCORE


def guessed_from(db: Session, product: Product, said: str) -> bool:
    """Whether the caller's words find `product` only by a guess (see `guessed`)."""
    if heard_as_names(said):
        return True
    if says_product(product, said):
        return False  # most turns: no second search
    hits = search_products(db, said, limit=8)
    hit = next((h for h in hits if h.product.sku == product.sku), None)
    if hit is None:
        # Not found from the caller's words at all: a brand said in pieces ("zir tec")
        # is theirs; anything else is the model's own idea of what they meant.
        return all(p.sku != product.sku for p in brand_family(db, said))
    return guessed(hit, said)


def offer(product: Product, currency: str) -> str:
    """One product, offered when it can be sold."""
    sellable = not product.prescription_only and product.stock > 0
    ask = ORDER_IT if sellable else "Can I help with anything else?"
    return f"We have {describe(product, currency)}. {ask}"


async def get_product(ctx: ToolContext, params: ProductName) -> str:
    shop = pharmacy(ctx)
    product = await shop.run(lambda db: resolve_product(db, params.product))
    text = f"{describe(product, shop.shop.currency)}. {product.description}"
    if product.stock > 0 and not product.prescription_only:
        text += f" We have {product.stock} in stock."
    return text
