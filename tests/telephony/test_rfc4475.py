"""RFC 4475's torture messages (tests/telephony/rfc4475/, byte-exact from the RFC's
archive), read by the SIP front and sent to a live endpoint.

What a UAS answers each one, from the RFC's own text (manifest.yaml quotes it). Where
the RFC allows either of two answers, the one chosen is said beside it.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from pyVoIP import SIP

from telephony import sipmsg
from telephony.sipmsg import SipError
from telephony.wire import response_to

CORPUS = Path(__file__).parent / "rfc4475"
MANIFEST = yaml.safe_load((CORPUS / "manifest.yaml").read_text())
ANSWERED = 200  # an INVITE answered with a call, or an OPTIONS with its 200
DROPPED = None  # a response with no transaction, or a datagram too broken to address

AS_UAS: dict[str, int | None] = {
    # 3.1.1: valid syntax
    "wsinv.dat": 481,  # its To has a tag: inside a dialog the gateway has not got (12.2.2)
    "intmeth.dat": 501,
    "esc01.dat": ANSWERED,
    "escnull.dat": 405,  # REGISTER: a gateway is no registrar
    "esc02.dat": 501,  # RE%47IST%45R is not REGISTER
    "lwsdisp.dat": ANSWERED,
    "longreq.dat": ANSWERED,
    "dblreq.dat": 405,  # and the second request in the datagram is ignored
    "semiuri.dat": ANSWERED,
    "transports.dat": ANSWERED,
    "mpart01.dat": 405,  # MESSAGE
    "unreason.dat": DROPPED,
    "noreason.dat": DROPPED,
    # 3.1.2: invalid
    "badinv01.dat": 400,
    "clerr.dat": 400,
    "ncl.dat": 400,
    "scalar02.dat": 400,
    "scalarlg.dat": DROPPED,
    "quotbal.dat": 400,
    "ltgtruri.dat": 400,
    "lwsruri.dat": 400,
    "lwsstart.dat": 400,
    "trws.dat": 400,
    "escruri.dat": 400,
    "baddate.dat": ANSWERED,  # "ignore the Date": a gateway does not use it
    "regbadct.dat": 400,
    "badaspec.dat": ANSWERED,  # "reject, or ignore the spaces": ignored
    "baddn.dat": 400,
    "badvers.dat": 505,
    "mismatch01.dat": 400,
    "mismatch02.dat": 400,  # "501 (400 also acceptable)"
    "bigcode.dat": DROPPED,
    # 3.2-3.4: valid syntax, questionable meaning
    "badbranch.dat": ANSWERED,  # "or fall back to RFC 2543 matching"
    "insuf.dat": 400,
    "unkscm.dat": 416,
    "novelsc.dat": 416,
    "unksm2.dat": 405,  # REGISTER
    "bext01.dat": 420,
    "invut.dat": 415,
    "regaut01.dat": 405,  # REGISTER
    "multi01.dat": 400,
    "mcl01.dat": 400,
    "bcast.dat": DROPPED,
    "zeromf.dat": ANSWERED,  # Max-Forwards 0 stops proxies; an endpoint answers
    "cparam01.dat": 405,
    "cparam02.dat": 405,
    "regescrt.dat": 405,
    "sdp01.dat": 406,
    "inv2543.dat": ANSWERED,
}


def test_the_corpus_and_the_table_agree() -> None:
    assert sorted(AS_UAS) == sorted(entry["file"] for entry in MANIFEST)
    assert sorted(AS_UAS) == sorted(p.name for p in CORPUS.glob("*.dat"))
    assert sum(1 for entry in MANIFEST if not entry["valid"]) == 19


def outcome(raw: bytes) -> tuple[int | None, sipmsg.SipMessage | None]:
    """What the front decides, before any dialog state: the status, and what pyVoIP reads."""
    try:
        message = sipmsg.parse(raw)
    except SipError as exc:
        # Answered only if the request can still be addressed, as the endpoint does.
        return (exc.status if response_to(raw, f"{exc.status} x") else DROPPED), None
    if not message.is_request:
        return DROPPED, None
    try:
        sipmsg.check_request(message)
    except SipError as exc:
        return exc.status, None
    if message.method == "INVITE" and message.to.tag is not None:
        return 481, message  # no call is open before the corpus: no dialog to be in
    return ANSWERED, message


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda entry: entry["file"])
def test_each_message_is_read_as_the_rfc_says(entry: dict) -> None:
    raw = (CORPUS / entry["file"]).read_bytes()
    status, message = outcome(raw)
    assert status == AS_UAS[entry["file"]]
    if not entry["valid"] and status == ANSWERED:
        assert "ignore" in entry["expect"]  # the RFC's own second choice, not a miss
    if message is not None and message.method in ("INVITE", "ACK", "BYE", "CANCEL"):
        # What reaches pyVoIP parses there: its crashes were what refused real phones.
        parsed = SIP.SIPMessage(message.canonical())
        assert parsed.headers["Call-ID"] == message.call_id


def on_loopback(raw: bytes) -> bytes:
    """The corpus's media addresses (192.0.2.x, TEST-NET) moved to 127.0.0.x: the same
    length, so every Content-Length still holds, and no RTP leaves the machine."""
    return raw.replace(b"IN IP4 192.0.2.", b"IN IP4 127.0.0.")


@dataclass(frozen=True)
class Response:
    status: int
    cseq_method: str
    message: sipmsg.SipMessage | None  # None when it echoes what made the request bad


class Receiver(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.responses: asyncio.Queue[Response] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        status = re.match(rb"SIP/2\.0 (\d{3}) ", data)
        cseq = re.search(rb"^CSeq:\s*\d+\s+(\S+)", data, re.MULTILINE | re.IGNORECASE)
        assert status is not None and cseq is not None, data
        try:
            message: sipmsg.SipMessage | None = sipmsg.parse(data)
        except SipError:
            message = None
        if int(status.group(1)) >= 200:
            self.responses.put_nowait(
                Response(int(status.group(1)), cseq.group(1).decode(), message)
            )


async def test_the_corpus_against_a_live_endpoint(phone) -> None:
    crashed: list[threading.ExceptHookArgs] = []
    previous_hook = threading.excepthook
    threading.excepthook = crashed.append
    loop = asyncio.get_running_loop()
    transport, receiver = await loop.create_datagram_endpoint(Receiver, local_addr=("127.0.0.1", 0))
    target = (phone.config.host, phone.config.port)
    endpoint = phone.endpoint.phone
    try:
        answered_calls = []
        for entry in MANIFEST:
            raw = on_loopback((CORPUS / entry["file"]).read_bytes())
            expected = AS_UAS[entry["file"]]
            transport.sendto(raw, target)
            if expected is DROPPED:
                continue
            response = await asyncio.wait_for(receiver.responses.get(), 10)
            assert response.status == expected, (entry["file"], response.status)
            if response.cseq_method == "INVITE" and response.status == 200:
                assert response.message is not None
                answered_calls.append(response.message)
        # Something the corpus cannot say: the endpoint still answers after all of it.
        probe = sipmsg.parse(on_loopback((CORPUS / "zeromf.dat").read_bytes()))
        transport.sendto(on_loopback((CORPUS / "zeromf.dat").read_bytes()), target)
        alive = await asyncio.wait_for(receiver.responses.get(), 10)
        assert alive.message is not None and alive.message.call_id == probe.call_id
        assert len(answered_calls) == sum(
            1 for e in MANIFEST if AS_UAS[e["file"]] == ANSWERED and _method(e) == "INVITE"
        )
        for answer in answered_calls:  # every dialog opened is closed: ACK, then BYE
            for method, cseq in (("ACK", answer.cseq), ("BYE", answer.cseq + 1)):
                transport.sendto(in_dialog(answer, method, cseq, transport), target)
            bye_ok = await asyncio.wait_for(receiver.responses.get(), 10)
            assert (bye_ok.status, bye_ok.cseq_method) == (200, "BYE")
        await asyncio.wait_for(phone.endpoint.wait_finished(len(answered_calls)), 30)
    finally:
        transport.close()
        threading.excepthook = previous_hook
    assert crashed == []  # no thread died on any message
    assert endpoint.sip.NSD and any(t.name == "SIP receive" for t in threading.enumerate())
    assert endpoint.live_calls() == 0 and endpoint.calls == {}
    assert endpoint.assignedPorts == []  # every RTP port back in the pool


def _method(entry: dict) -> str:
    return (CORPUS / entry["file"]).read_bytes().split(b" ", 1)[0].decode(errors="replace")


def in_dialog(answer: sipmsg.SipMessage, method: str, cseq: int, transport) -> bytes:
    port = transport.get_extra_info("sockname")[1]
    contact = re.search(r"<([^>]+)>", answer.get("Contact") or "")
    assert contact is not None
    lines = [
        f"{method} {contact.group(1)} SIP/2.0",
        f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bK{uuid.uuid4().hex[:10]}",
        f"From: {answer.get('From')}",
        f"To: {answer.get('To')}",
        f"Call-ID: {answer.call_id}",
        f"CSeq: {cseq} {method}",
        "Max-Forwards: 70",
        "Content-Length: 0",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()
