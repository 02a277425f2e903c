"""Names as a speech recogniser mishears or splits them must find the right product first."""

from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from models import make_engine
from models.catalogue import load_catalogue
from models.search import phonetic_key, search_products

from ..conftest import BACKENDS, fresh_database

pytestmark = pytest.mark.databases


@pytest.fixture(scope="module", params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Engine]:
    """One catalogue per database for the whole module: searching changes nothing."""
    with fresh_database(request, request.param, tmp_path_factory.mktemp("search")) as url:
        engine = make_engine(url)
        load_catalogue(engine)
        yield engine
        engine.dispose()


MISHEARD = [
    ("Paris at them all", "PAR500-16"),
    ("ibu profen", "IBU200-24"),
    ("I be profen", "IBU200-24"),
    ("lorra ta deen", "LOR10-30"),
    ("lore a tah dean", "LOR10-30"),
    ("low rata dean", "LOR10-30"),
    ("set a rise in", "CET10-30"),
    ("seti rizine", "CET10-30"),
    ("fex so fen a dean", "FEX120-30"),
    ("omega pra zole", "OMEP20-14"),
    ("low per a mide", "LOPE2-12"),
    ("hydro cortisone cream", "HYDRO1-15"),
    ("clotrima zole", "CLOTR-20"),
    ("asprin", "ASP300-32"),
    ("gas viscon", "GAV-24"),
    ("lacked you lose", "LACT-300"),
    ("terbin a fine", "TERB-15"),
    ("naproxin", "NAP250-9"),
    ("chlor fen a mean", "CHLOR4-28"),
    ("beck low meta sone", "BECNAS-200"),
    ("zylo meta zoline", "XYLNAS-10"),
    ("dex tro meth orphan", "DEXCOUGH-150"),
    ("guy fen e sin", "GUAI-150"),
    ("ser trah leen", "SERT50-28"),
    ("ator vastatin", "ATOR20-28"),
    ("co codamol", "COD-PAR-32"),
    ("amoxy cillin", "AMOX500-21"),
    ("sal bute a mol inhaler", "SALB100-200"),
    ("pseudo ephedrine", "PSE60-12"),
    ("famo tidine", "FAMO10-12"),
    ("mebev rin", "MEBEV-15"),
    ("cinna rizine", "CINN-15"),
    ("fluka nazole", "CANDIDA-1"),
    ("acyclovir", "ACIC-2"),
    ("two boxes of paris at them all please", "PAR500-16"),
    ("do you have any lorra ta deen", "LOR10-30"),
]


@pytest.mark.parametrize(("heard", "sku"), MISHEARD)
def test_misheard_names_find_the_right_product_first(db, heard: str, sku: str) -> None:
    with Session(db) as s:
        hits = search_products(s, heard, limit=3)
    assert hits, f"nothing found for {heard!r}"
    assert hits[0].product.sku == sku, [(h.product.sku, round(h.score, 2)) for h in hits]


def test_symptoms_find_products_by_full_text(db) -> None:
    with Session(db) as s:
        cough = {h.product.sku for h in search_products(s, "something for my chesty cough")}
        allergy = {h.product.sku for h in search_products(s, "I have hay fever")}
    assert "GUAI-150" in cough
    assert allergy & {"LOR10-30", "CET10-30", "FEX120-30"}


@pytest.mark.parametrize("noise", ["I will take two boxes", "hello", "yes please", "ranitidine"])
def test_words_that_name_no_product_find_nothing(db, noise: str) -> None:
    with Session(db) as s:
        assert [h for h in search_products(s, noise) if h.name_score >= 0.75] == []


def test_phonetic_key_folds_spelling_and_voicing() -> None:
    assert phonetic_key("parisatthemall") == phonetic_key("paracetamol")
    assert phonetic_key("lackedyoulose") == phonetic_key("lactulose")
    assert phonetic_key("ibuprofen") == phonetic_key("ibeprofen")
