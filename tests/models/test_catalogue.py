import pytest
from sqlmodel import Session, func, select

from models.catalogue import load_catalogue, read_catalogue
from models.search import catalogue_vocabulary
from models.shop import Product

pytestmark = pytest.mark.databases


def test_the_catalogue_has_at_least_60_realistic_otc_products() -> None:
    currency, products = read_catalogue()
    otc = [p for p in products if not p.prescription_only]
    assert currency == "USD"
    assert len(otc) >= 60
    assert len({p.sku for p in products}) == len(products)
    for p in products:
        assert p.name and p.form and p.price_cents > 0 and p.pack_size >= 1 and p.stock >= 0


def test_loading_twice_changes_nothing(db) -> None:
    with Session(db) as s:
        product = s.get(Product, "PAR500-16")
        product.stock = 7  # a sale happened since the first load
        s.add(product)
        s.commit()
    again = load_catalogue(db)
    assert again.added == 0 and again.unchanged >= 60
    with Session(db) as s:
        assert s.get(Product, "PAR500-16").stock == 7
        assert s.exec(select(func.count()).select_from(Product)).one() == again.unchanged


def test_vocabulary_lists_names_and_ingredients(db) -> None:
    with Session(db) as s:
        words = catalogue_vocabulary(s)
    assert "Paracetamol" in words and "Loratadine" in words and "Dextromethorphan" in words
    assert "hay fever" in words  # names alone make the recogniser hear names everywhere
