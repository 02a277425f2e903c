"""The pharmacy's tables: products, customers, orders and their lines.

Money is integer cents. Totals are computed by code from these rows, never by a model.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from models.tables import timestamp


# A catalogue entry; `stock` only changes inside an order's confirming transaction.
class Product(SQLModel, table=True):
    __tablename__ = "products"

    sku: str = Field(primary_key=True, max_length=40)
    name: str = Field(max_length=120, index=True)
    active_ingredient: str = Field(default="", max_length=200)
    strength: str = Field(default="", max_length=60)
    form: str = Field(default="", max_length=60)
    pack_size: int = Field(default=1, ge=1)
    price_cents: int = Field(ge=0)
    stock: int = Field(default=0, ge=0)
    prescription_only: bool = False
    description: str = Field(default="", sa_type=Text)
    keywords: str = Field(default="", sa_type=Text)


# A caller: by phone number over SIP, by client id on the web.
class Customer(SQLModel, table=True):
    __tablename__ = "customers"

    id: int | None = Field(default=None, primary_key=True)
    client_id: str = Field(unique=True, index=True, max_length=200)
    phone: str | None = Field(default=None, index=True, max_length=40)
    name: str | None = Field(default=None, max_length=120)
    created_at: datetime = timestamp()


class OrderStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    CANCELLED = "cancelled"


class Order(SQLModel, table=True):
    __tablename__ = "orders"

    id: int | None = Field(default=None, primary_key=True)
    customer_id: int = Field(foreign_key="customers.id", index=True)
    status: OrderStatus = Field(default=OrderStatus.PENDING, index=True)
    total_cents: int = 0
    # Set by the read-back: which version of the lines the caller heard, and where in
    # the conversation, so confirm can check that the caller's yes answered it.
    revision: int = 0
    read_back_revision: int | None = None
    read_back_seq: int | None = None
    created_at: datetime = timestamp()
    confirmed_at: datetime | None = timestamp(nullable=True)


class OrderLine(SQLModel, table=True):
    __tablename__ = "order_lines"
    __table_args__ = (UniqueConstraint("order_id", "sku"),)

    id: int | None = Field(default=None, primary_key=True)
    order_id: int = Field(foreign_key="orders.id", index=True)
    sku: str = Field(foreign_key="products.sku", max_length=40)
    quantity: int = Field(ge=1)
    # Price at the time the line was added: a later price change does not alter an order.
    unit_price_cents: int = Field(ge=0)
