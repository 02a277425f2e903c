"""The operators' view of the shop: products, orders and customers (read-only).

Prices and totals are what the database holds; nothing here computes money.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from sqlalchemy import func
from sqlmodel import col, select

from models.orders import view_order
from models.queries import contains
from models.shop import Customer, Order, OrderStatus, Product
from web.auth import require_operator
from web.console_api import Db, Limit, Offset
from web.ids import MAX_ROW_ID

RowId = Annotated[int, Path(ge=0, le=MAX_ROW_ID)]

router = APIRouter(prefix="/api", tags=["shop"], dependencies=[Depends(require_operator)])


def _page(db: Db, query: Any, limit: int, offset: int) -> dict[str, Any]:
    total = db.exec(select(func.count()).select_from(query.subquery())).one()
    return {
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": list(db.exec(query.offset(offset).limit(limit)).all()),
    }


@router.get("/products")
def products(
    db: Db,
    q: str | None = Query(None, max_length=100, description="Part of a name or ingredient."),
    prescription_only: bool | None = None,
    in_stock: bool | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    query = select(Product)
    if q:
        query = query.where(contains(q, Product.name, Product.active_ingredient))
    if prescription_only is not None:
        query = query.where(Product.prescription_only == prescription_only)
    if in_stock is not None:
        query = query.where((col(Product.stock) > 0) if in_stock else (col(Product.stock) == 0))
    return _page(db, query.order_by(col(Product.name)), limit, offset)


@router.get("/products/{sku}")
def product(sku: str, db: Db) -> Product:
    row = db.get(Product, sku)
    if row is None:
        raise HTTPException(404, "no such product")
    return row


def _order_json(db: Db, order: Order) -> dict[str, Any]:
    view = view_order(db, order=order)
    return {
        **order.model_dump(),
        "lines": [
            {
                "sku": line.sku,
                "name": line.name,
                "strength": line.strength,
                "form": line.form,
                "quantity": line.quantity,
                "unit_price_cents": line.unit_price_cents,
            }
            for line in view.lines
        ],
    }


@router.get("/orders")
def orders(
    db: Db,
    customer_id: Annotated[int | None, Query(ge=0, le=MAX_ROW_ID)] = None,
    status: OrderStatus | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    query = select(Order)
    if customer_id is not None:
        query = query.where(Order.customer_id == customer_id)
    if status is not None:
        query = query.where(Order.status == status)
    if since is not None:
        query = query.where(col(Order.created_at) >= since)
    if until is not None:
        query = query.where(col(Order.created_at) < until)
    page = _page(db, query.order_by(col(Order.id).desc()), limit, offset)
    page["items"] = [_order_json(db, o) for o in page["items"]]
    return page


@router.get("/orders/{order_id}")
def order(order_id: RowId, db: Db) -> dict[str, Any]:
    row = db.get(Order, order_id)
    if row is None:
        raise HTTPException(404, "no such order")
    return _order_json(db, row)


@router.get("/customers")
def customers(
    db: Db,
    q: str | None = Query(None, max_length=100, description="Part of a phone, name or id."),
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    query = select(Customer)
    if q:
        query = query.where(contains(q, Customer.client_id, Customer.phone, Customer.name))
    return _page(db, query.order_by(col(Customer.id).desc()), limit, offset)


@router.get("/customers/{customer_id}")
def customer(customer_id: RowId, db: Db) -> dict[str, Any]:
    row = db.get(Customer, customer_id)
    if row is None:
        raise HTTPException(404, "no such customer")
    history = db.exec(
        select(Order).where(Order.customer_id == customer_id).order_by(col(Order.id).desc())
    ).all()
    return {**row.model_dump(), "orders": [_order_json(db, o) for o in history]}
