"""Finding products. Outputs are plain sentences the agent can say as they are."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import func
from sqlmodel import Session, select

from agents.deps import pharmacy
from agents.guards import grounded
from agents.speech import describe
from agents.variants import resolve, variant_words
from models.search import Hit, content_words, search_products
from models.shop import Product
from swarm import ToolContext, ToolError

# A name the caller said resolves to a product only when the match is this close.
RESOLVE_SCORE = 0.75


class SearchQuery(BaseModel):
    query: str = Field(
        min_length=2,
        description="What the caller asked for, in their own words: a product name or a symptom.",
    )


class ProductName(BaseModel):
    product: str = Field(min_length=2, description="The product name as the caller said it.")


def find_product(db: Session, name: str) -> Product | None:
    """The product `name` clearly names, by its name or ingredient; None otherwise."""
    hits = [h for h in search_products(db, name, limit=5) if h.name_score >= RESOLVE_SCORE]
    hits.sort(key=lambda h: (-round(h.name_score, 3), len(h.product.name)))
    return hits[0].product if hits else None


def family(db: Session, name: str) -> list[Product]:
    """The products `name` matches by their own name or ingredient, best first: for
    "ibuprofen" the tablets, the strong ones, the gel and the children's suspension."""
    hits = [h for h in search_products(db, name, limit=8) if h.name_score >= RESOLVE_SCORE]
    hits.sort(key=lambda h: (-round(h.name_score, 3), len(h.product.name)))
    return [h.product for h in hits]


def _ingredient(product: Product) -> str:
    return product.active_ingredient.split(",")[0].split(" and ")[0].strip().lower()


def brand_family(db: Session, name: str) -> list[Product]:
    """Products a brand name stands for ("imodium", "tylenol"), from their keywords: only
    when the word is in a few products of one ingredient, so a symptom is not a brand."""
    found: list[Product] = []
    words = [w for w in content_words(name) if len(w) >= 5]
    if not words:
        return []
    for product in db.exec(select(Product)).all():
        if set(words) & set(product.keywords.lower().split()):
            found.append(product)
    ingredients = {p.active_ingredient.split(",")[0].split(" and ")[0].lower() for p in found}
    if not found or len(found) > 4 or len(ingredients) > 1:
        return []
    return sorted(found, key=lambda p: len(p.name))


def choose_product(
    db: Session, names: list[str], said: str, currency: str = "USD"
) -> Product | str | None:
    """The product the caller means, from the first of `names` that matches any; the
    variant is picked by the caller's words (form, strength, pack, who it is for).

    Returns a short question when the words fit several products, and None when no
    name matches. Measured before: "the gel", "the 400s" and "for my toddler" all
    became the plain adult tablets, because the shortest name won every tie."""
    for name in names:
        exact = db.exec(select(Product).where(func.lower(Product.name) == name.strip().lower()))
        named = exact.first()
        if named is not None and not variant_words(said).given:
            return named  # a product's own name, as just offered: nothing to resolve
        candidates = family(db, name) or brand_family(db, name)
        if not candidates:
            continue
        # One ingredient's products: "cetra zine" is Cetirizine, and Sertraline, a near
        # sound of another drug, is no variant of it to ask about.
        first = _ingredient(candidates[0])
        candidates = [p for p in candidates if _ingredient(p) == first]
        resolution = resolve(candidates, f"{said} {name}" if name != said else said)
        if resolution.product is not None:
            return resolution.product
        if resolution.options:
            return _found([Hit(p, 1.0) for p in resolution.options[:3]], currency)
        return _no_variant(candidates[0])
    return None


def _no_variant(product: Product) -> str:
    return (
        f"I'm sorry, we don't have {product.name} in that form. A pharmacist can advise "
        "what suits. Would you like something else?"
    )


def resolve_product(db: Session, name: str) -> Product:
    product = find_product(db, name)
    if product is None:
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
    if variant_words(query).given:
        # "the paracetamol liquid for a toddler": the variant, not the plain tablets.
        choice = await shop.run(lambda db: choose_product(db, [query], query, shop.shop.currency))
        if isinstance(choice, Product):
            return _found([Hit(choice, 1.0)], shop.shop.currency)
        if isinstance(choice, str):
            return choice
    hits = await shop.run(lambda db: search_products(db, query, limit=3))
    if not hits:
        if len(query.split()) > 4:
            # A sentence read back sounds like a parrot, and repeats whatever was in it.
            return "I'm sorry, I can't find that. Could you tell me the product's name?"
        return f"I'm sorry, I can't find anything for {query}. Could you describe it another way?"
    # A confident name match is the product the caller meant: don't list look-alikes.
    if hits[0].score >= 0.9 and (len(hits) == 1 or hits[1].score < hits[0].score):
        hits = hits[:1]
    return _found(hits, shop.shop.currency)


async def get_product(ctx: ToolContext, params: ProductName) -> str:
    shop = pharmacy(ctx)
    product = await shop.run(lambda db: resolve_product(db, params.product))
    text = f"{describe(product, shop.shop.currency)}. {product.description}"
    if product.stock > 0 and not product.prescription_only:
        text += f" We have {product.stock} in stock."
    return text
