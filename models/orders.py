"""Customers and orders. Every rule about money and stock lives here, in code.

Functions are keyword-only and take the caller's database session.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import update
from sqlmodel import Session, col, select

from models.shop import Customer, Order, OrderLine, OrderStatus, Product
from models.tables import SessionRow, utcnow

MAX_QUANTITY_PER_LINE = 10


class OrderError(Exception):
    """A rule of the shop said no; the message is worded for the caller's agent."""


class PrescriptionOnly(OrderError):
    def __init__(self, product: Product) -> None:
        self.sku, self.name = product.sku, product.name
        super().__init__(f"{product.name} is prescription only and cannot be ordered by phone")


class OutOfStock(OrderError):
    def __init__(self, product: Product, available: int, wanted: int) -> None:
        self.sku, self.name, self.available, self.wanted = (
            product.sku,
            product.name,
            available,
            wanted,
        )
        super().__init__(f"only {available} of {product.name} in stock, {wanted} wanted")


class QuantityNotAllowed(OrderError):
    def __init__(self, quantity: int, name: str | None = None) -> None:
        self.quantity, self.name = quantity, name
        super().__init__(
            f"a quantity of {quantity} is not allowed; between 1 and {MAX_QUANTITY_PER_LINE} per product"
        )


class NoPendingOrder(OrderError):
    def __init__(self) -> None:
        super().__init__("there is no order in progress")


class NotInOrder(OrderError):
    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not in the order")


@dataclass(frozen=True, slots=True)
class LineView:
    sku: str
    name: str
    strength: str
    form: str
    quantity: int
    unit_price_cents: int
    # The product's keywords: callers name a line by what it is for ("the allergy ones").
    keywords: str = ""

    @property
    def total_cents(self) -> int:
        return self.quantity * self.unit_price_cents


@dataclass(frozen=True, slots=True)
class OrderView:
    id: int
    status: OrderStatus
    lines: tuple[LineView, ...]
    revision: int
    read_back_revision: int | None
    read_back_seq: int | None

    @property
    def total_cents(self) -> int:
        return sum(line.total_cents for line in self.lines)


@dataclass(frozen=True, slots=True)
class Confirmation:
    order: OrderView
    already_confirmed: bool


# --- customers -------------------------------------------------------------------------------


def get_or_create_customer(db: Session, *, client_id: str, phone: str | None = None) -> Customer:
    customer = db.exec(select(Customer).where(Customer.client_id == client_id)).first()
    if customer is None:
        customer = Customer(client_id=client_id, phone=phone)
        db.add(customer)
        db.commit()
        db.refresh(customer)
    session_row = db.get(SessionRow, client_id)
    if session_row is not None and session_row.customer_id != customer.id:
        session_row.customer_id = customer.id
        db.add(session_row)
        db.commit()
    return customer


# --- reading orders ----------------------------------------------------------------------------


def view_order(db: Session, *, order: Order) -> OrderView:
    rows = db.exec(
        select(OrderLine, Product)
        .where(OrderLine.order_id == order.id, OrderLine.sku == Product.sku)
        .order_by(col(OrderLine.id))
    ).all()
    lines = tuple(
        LineView(
            p.sku, p.name, p.strength, p.form, line.quantity, line.unit_price_cents, p.keywords
        )
        for line, p in rows
    )
    assert order.id is not None
    return OrderView(
        order.id, order.status, lines, order.revision, order.read_back_revision, order.read_back_seq
    )


def pending_order(db: Session, *, customer_id: int) -> Order | None:
    return db.exec(
        select(Order)
        .where(Order.customer_id == customer_id, Order.status == OrderStatus.PENDING)
        .order_by(col(Order.id).desc())
    ).first()


def last_confirmed(db: Session, *, customer_id: int) -> Order | None:
    return db.exec(
        select(Order)
        .where(Order.customer_id == customer_id, Order.status == OrderStatus.CONFIRMED)
        .order_by(col(Order.id).desc())
    ).first()


def customer_orders(db: Session, *, customer_id: int, limit: int = 5) -> list[OrderView]:
    """The caller's own orders, newest first; nobody else's are ever returned."""
    orders = db.exec(
        select(Order)
        .where(Order.customer_id == customer_id)
        .order_by(col(Order.id).desc())
        .limit(limit)
    ).all()
    return [view_order(db, order=o) for o in orders]


# --- changing a pending order ----------------------------------------------------------------


def set_quantity(
    db: Session,
    *,
    customer_id: int,
    product: Product,
    quantity: int,
    add: bool = True,
    commit: bool = True,
) -> OrderView:
    """Add `quantity` of a product to the pending order (or set it, with add=False).

    `commit=False` leaves the change for the caller's one commit, so that several
    changes a caller asked for in one sentence are saved together or not at all: a
    failure between them left the first saved, and the caller's retry added it twice.
    A refused change writes nothing, and leaves the earlier ones of the transaction be."""
    if product.prescription_only:
        raise PrescriptionOnly(product)
    order = pending_order(db, customer_id=customer_id)
    line = (
        None
        if order is None
        else db.exec(
            select(OrderLine).where(OrderLine.order_id == order.id, OrderLine.sku == product.sku)
        ).first()
    )
    new_quantity = (line.quantity if line and add else 0) + quantity
    if not 1 <= new_quantity <= MAX_QUANTITY_PER_LINE:
        raise QuantityNotAllowed(new_quantity, product.name)
    if new_quantity > product.stock:
        raise OutOfStock(product, product.stock, new_quantity)
    if order is None:
        order = Order(customer_id=customer_id)
        db.add(order)
        db.flush()
    if line is None:
        assert order.id is not None
        line = OrderLine(
            order_id=order.id,
            sku=product.sku,
            quantity=new_quantity,
            unit_price_cents=product.price_cents,
        )
    line.quantity = new_quantity
    db.add(line)
    _touch(db, order)
    if not commit:
        db.flush()
        return view_order(db, order=order)
    db.commit()
    db.refresh(order)
    return view_order(db, order=order)


def _require_pending(db: Session, customer_id: int) -> Order:
    order = pending_order(db, customer_id=customer_id)
    if order is None:
        raise NoPendingOrder()
    return order


def _saved(db: Session, order: Order) -> OrderView:
    db.add(order)
    db.commit()
    db.refresh(order)
    return view_order(db, order=order)


def remove_product(db: Session, *, customer_id: int, sku: str, name: str) -> OrderView:
    order = _require_pending(db, customer_id)
    line = db.exec(
        select(OrderLine).where(OrderLine.order_id == order.id, OrderLine.sku == sku)
    ).first()
    if line is None:
        raise NotInOrder(name)
    db.delete(line)
    _touch(db, order)
    return _saved(db, order)


def cancel_pending(db: Session, *, customer_id: int) -> OrderView | None:
    order = pending_order(db, customer_id=customer_id)
    if order is None:
        return None
    order.status = OrderStatus.CANCELLED
    return _saved(db, order)


def mark_read_back(db: Session, *, customer_id: int, revision: int, seq: int) -> OrderView:
    """Record that the caller has just heard version `revision` of the order, at message `seq`."""
    order = _require_pending(db, customer_id)
    if order.revision != revision:
        raise OrderError("the order changed while it was being read back")
    order.read_back_revision, order.read_back_seq = order.revision, seq
    order.total_cents = view_order(db, order=order).total_cents
    db.add(order)
    db.commit()
    db.refresh(order)
    return view_order(db, order=order)


def _touch(db: Session, order: Order) -> None:
    db.flush()
    order.revision += 1
    order.read_back_revision = None  # a changed order must be read back again
    order.total_cents = view_order(db, order=order).total_cents
    db.add(order)


# --- confirming ------------------------------------------------------------------------------


def confirm_order(db: Session, *, customer_id: int, order_id: int) -> Confirmation:
    """Place the order: stock goes down and the status becomes confirmed, or nothing happens.

    Idempotent: confirming a confirmed order returns it unchanged. The first
    statement is a write, so SQLite takes its write lock before anything is
    read and two callers racing for the last unit are serialised.
    """
    claimed = db.exec(
        update(Order)
        .where(
            col(Order.id) == order_id,
            col(Order.customer_id) == customer_id,
            col(Order.status) == OrderStatus.PENDING,
        )
        .values(status=OrderStatus.CONFIRMED, confirmed_at=utcnow())
    )
    order = db.exec(
        select(Order).where(Order.id == order_id, Order.customer_id == customer_id)
    ).first()
    if order is None:
        db.rollback()
        raise NoPendingOrder()
    if claimed.rowcount == 0:
        db.rollback()
        if order.status is OrderStatus.CONFIRMED:
            return Confirmation(view_order(db, order=order), already_confirmed=True)
        raise NoPendingOrder()
    view = view_order(db, order=order)
    if not view.lines:
        db.rollback()
        raise OrderError("the order is empty")
    for line in view.lines:
        taken = db.exec(
            update(Product)
            .where(col(Product.sku) == line.sku, col(Product.stock) >= line.quantity)
            .values(stock=col(Product.stock) - line.quantity)
        )
        if taken.rowcount == 0:
            product = db.get(Product, line.sku)
            assert product is not None
            available = product.stock
            db.rollback()
            raise OutOfStock(product, available, line.quantity)
    order.total_cents = view.total_cents
    db.add(order)
    db.commit()
    db.refresh(order)
    return Confirmation(view_order(db, order=order), already_confirmed=False)
