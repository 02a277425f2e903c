from __future__ import annotations

import threading

import pytest
from sqlmodel import Session, select

from models import orders
from models.shop import Order, OrderStatus, Product

pytestmark = pytest.mark.databases


def customer(db, client_id: str = "c1") -> int:
    with Session(db) as s:
        return orders.get_or_create_customer(s, client_id=client_id).id


def product(s: Session, sku: str) -> Product:
    return s.get(Product, sku)


def test_totals_are_computed_from_database_prices(db) -> None:
    cid = customer(db)
    with Session(db) as s:
        orders.set_quantity(s, customer_id=cid, product=product(s, "PAR500-16"), quantity=2)
        view = orders.set_quantity(s, customer_id=cid, product=product(s, "IBU200-24"), quantity=1)
    assert [(line.sku, line.quantity, line.unit_price_cents) for line in view.lines] == [
        ("PAR500-16", 2, 299),
        ("IBU200-24", 1, 399),
    ]
    assert view.total_cents == 2 * 299 + 399


def test_adding_again_adds_and_limits_apply(db) -> None:
    cid = customer(db)
    with Session(db) as s:
        orders.set_quantity(s, customer_id=cid, product=product(s, "PAR500-16"), quantity=4)
        view = orders.set_quantity(s, customer_id=cid, product=product(s, "PAR500-16"), quantity=3)
        assert view.lines[0].quantity == 7
        with pytest.raises(orders.QuantityNotAllowed):
            orders.set_quantity(s, customer_id=cid, product=product(s, "PAR500-16"), quantity=100)
        with pytest.raises(orders.PrescriptionOnly):
            orders.set_quantity(s, customer_id=cid, product=product(s, "AMOX500-21"), quantity=1)


def test_changes_left_uncommitted_are_saved_together_and_a_refusal_keeps_them(db) -> None:
    cid = customer(db)
    with Session(db) as s:
        orders.set_quantity(
            s, customer_id=cid, product=product(s, "PAR500-16"), quantity=2, commit=False
        )
        with pytest.raises(orders.QuantityNotAllowed):
            orders.set_quantity(
                s, customer_id=cid, product=product(s, "IBU200-24"), quantity=100, commit=False
            )
        view = orders.set_quantity(
            s, customer_id=cid, product=product(s, "IBU200-24"), quantity=1, commit=False
        )
        assert [(line.sku, line.quantity) for line in view.lines] == [
            ("PAR500-16", 2),
            ("IBU200-24", 1),
        ]
    with Session(db) as s:  # never committed: nothing was saved
        assert orders.pending_order(s, customer_id=cid) is None
        product(s, "IBU200-24").stock = 3
        s.commit()
        orders.set_quantity(
            s, customer_id=cid, product=product(s, "PAR500-16"), quantity=2, commit=False
        )
        with pytest.raises(orders.OutOfStock):
            orders.set_quantity(
                s, customer_id=cid, product=product(s, "IBU200-24"), quantity=5, commit=False
            )
        s.commit()
    with Session(db) as s:
        order = orders.pending_order(s, customer_id=cid)
        assert order is not None
        assert [(line.sku, line.quantity) for line in orders.view_order(s, order=order).lines] == [
            ("PAR500-16", 2)
        ]


def test_confirm_is_idempotent_and_moves_stock_once(db) -> None:
    cid = customer(db)
    with Session(db) as s:
        view = orders.set_quantity(s, customer_id=cid, product=product(s, "LOR10-30"), quantity=3)
        first = orders.confirm_order(s, customer_id=cid, order_id=view.id)
        second = orders.confirm_order(s, customer_id=cid, order_id=view.id)
        assert not first.already_confirmed and second.already_confirmed
        assert product(s, "LOR10-30").stock == 80 - 3
        assert len(s.exec(select(Order).where(Order.status == OrderStatus.CONFIRMED)).all()) == 1


def test_a_caller_cannot_confirm_someone_elses_order(db) -> None:
    alice, bob = customer(db, "alice"), customer(db, "bob")
    with Session(db) as s:
        view = orders.set_quantity(s, customer_id=alice, product=product(s, "LOR10-30"), quantity=1)
        with pytest.raises(orders.NoPendingOrder):
            orders.confirm_order(s, customer_id=bob, order_id=view.id)
        assert orders.customer_orders(s, customer_id=bob) == []


def test_racing_callers_never_take_stock_below_zero(db) -> None:
    """Eight callers in eight threads confirm 1 unit each of a product with 3 left."""
    with Session(db) as s:
        p = product(s, "ZINC-30")
        p.stock = 3
        s.add(p)
        s.commit()
    ids = {}
    for n in range(8):
        cid = customer(db, f"caller-{n}")
        with Session(db) as s:
            ids[cid] = orders.set_quantity(
                s, customer_id=cid, product=product(s, "ZINC-30"), quantity=1
            ).id
    start = threading.Barrier(8)
    results: list[str] = []

    def race(cid: int, order_id: int) -> None:
        start.wait()
        with Session(db) as s:
            try:
                orders.confirm_order(s, customer_id=cid, order_id=order_id)
                results.append("confirmed")
            except orders.OutOfStock:
                results.append("out of stock")

    threads = [threading.Thread(target=race, args=item) for item in ids.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["confirmed"] * 3 + ["out of stock"] * 5
    with Session(db) as s:
        assert product(s, "ZINC-30").stock == 0
        confirmed = s.exec(select(Order).where(Order.status == OrderStatus.CONFIRMED)).all()
        pending = s.exec(select(Order).where(Order.status == OrderStatus.PENDING)).all()
        assert len(confirmed) == 3 and len(pending) == 5  # a refused order stays open, unchanged


def test_a_change_after_read_back_needs_a_new_read_back(db) -> None:
    cid = customer(db)
    with Session(db) as s:
        view = orders.set_quantity(s, customer_id=cid, product=product(s, "PAR500-16"), quantity=1)
        read = orders.mark_read_back(s, customer_id=cid, revision=view.revision, seq=10)
        assert read.read_back_revision == read.revision
        changed = orders.set_quantity(
            s, customer_id=cid, product=product(s, "PAR500-16"), quantity=1
        )
        assert changed.read_back_revision is None
        with pytest.raises(orders.OrderError):
            orders.mark_read_back(s, customer_id=cid, revision=view.revision, seq=11)
