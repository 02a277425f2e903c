import re

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


def test_a_session_reads_the_catalogue_once_and_the_next_one_sees_a_new_product(db) -> None:
    """A tool's work is one session: its dozen searches read the names once. A product
    added meanwhile (by another gateway on the same database) is there at the next one."""
    from sqlalchemy import event

    from agents.tools.catalogue import brand_family, several_products
    from models.search import search_products

    whole_reads: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if re.search(r"\bFROM products\s*$", statement) and "keywords" in statement:
            whole_reads.append(statement)

    event.listen(db, "before_cursor_execute", count)
    try:
        with Session(db) as s:
            items = several_products(
                s, "two paracetamol, the ibuprofen gel, and some gaviscon and a zincovit"
            )
            assert [(w.words, w.quantity) for w in items][:2] == [
                ("paracetamol", 2),
                ("the ibuprofen gel", None),
            ]
            assert not brand_family(s, "zincovit")
            with Session(db) as other:
                other.add(
                    Product(
                        sku="ZINC-20",
                        name="Zinc Lozenges",
                        active_ingredient="zinc gluconate",
                        form="lozenge",
                        price_cents=450,
                        keywords="zincovit sore throat",
                    )
                )
                other.commit()
            assert not brand_family(s, "zincovit")  # this session's reading holds
        assert len(whole_reads) == 1, whole_reads
        with Session(db) as s:
            assert [p.sku for p in brand_family(s, "zincovit")] == ["ZINC-20"]
            assert search_products(s, "zinc lozenges")[0].product.sku == "ZINC-20"
        assert len(whole_reads) == 2
    finally:
        event.remove(db, "before_cursor_execute", count)
