"""The tolerant SIP reader in front of pyVoIP: what real peers send is read, what RFC 3261
forbids is refused with its status, and what is read parses in pyVoIP."""

from __future__ import annotations

import pytest
from pyVoIP import SIP

from telephony import sipmsg
from telephony.sipmsg import SipError


def message(*lines: str, body: str = "") -> bytes:
    head = "\r\n".join(lines)
    if body:
        head += f"\r\nContent-Length: {len(body.encode())}"
    return (head + "\r\n\r\n" + body).encode()


SDP = "\r\n".join(
    ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
     "m=audio 4000 RTP/AVP 0 8 101", "a=rtpmap:101 telephone-event/8000", "a=sendrecv", ""]
)  # fmt: skip
BASIC = (
    "INVITE sip:pharmacy@127.0.0.1:5070 SIP/2.0",
    "Via: SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bK1;rport",
    "To: <sip:pharmacy@127.0.0.1:5070>",
    'From: "Alice" <sip:+15550100@127.0.0.1>;tag=abc',
    "Call-ID: 1@x",
    "CSeq: 1 INVITE",
    "Contact: <sip:+15550100@127.0.0.1:5080>",
    "Content-Type: application/sdp",
)


def through_pyvoip(raw: bytes) -> SIP.SIPMessage:
    return SIP.SIPMessage(sipmsg.parse(raw).canonical())


def test_an_empty_supported_header_as_baresip_sends_it() -> None:
    raw = message(*BASIC, "Supported:", "Allow:INVITE,ACK", body=SDP)
    with pytest.raises(IndexError):
        SIP.SIPMessage(raw)  # the crash that refused the first softphone tried
    parsed = through_pyvoip(raw)
    assert parsed.headers["From"]["number"] == "+15550100"
    assert parsed.headers["From"]["tag"] == "abc"
    assert [m["port"] for m in parsed.body["m"]] == [4000]


def test_folding_compact_names_and_odd_spacing_read_as_the_long_form() -> None:
    raw = message(
        "INVITE sip:pharmacy@127.0.0.1 SIP/2.0",
        "v:  SIP / 2.0 / UDP   127.0.0.1:5080 ;",
        "  branch = z9hG4bK7 , SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK8",
        "TO :",
        " <sip:pharmacy@127.0.0.1> ;   tag    = 1918",
        'f: "J \\"Q\\" Public" <sip:jq@127.0.0.1>',
        " ;",
        "  tag = 98asjd8",
        "i: folded@x",
        "cseq: 0009",
        "  INVITE",
        "MaX-fOrWaRdS: 0068",
        "c: application/sdp",
        body=SDP,
    )
    parsed = sipmsg.parse(raw)
    assert [(v.host, v.port, v.params) for v in parsed.vias] == [
        ("127.0.0.1", 5080, (("branch", "z9hG4bK7"),)),
        ("10.0.0.1", None, (("branch", "z9hG4bK8"),)),
    ]
    assert parsed.to.tag == "1918" and parsed.from_.tag == "98asjd8"
    assert parsed.from_.display == 'J "Q" Public'
    assert (parsed.call_id, parsed.cseq, parsed.get("Max-Forwards")) == ("folded@x", 9, "0068")
    pyvoip = SIP.SIPMessage(parsed.canonical())
    assert pyvoip.headers["Call-ID"] == "folded@x"
    assert len(pyvoip.headers["Via"]) == 2


def test_sdp_oddities_leave_one_audio_stream_pyvoip_can_answer() -> None:
    sdp = "\r\n".join(
        [
            "v=0",
            "o=phone 9 9 IN IP4 192.0.2.9",
            "s=call",
            "c=IN IP4 192.0.2.9",
            "t=0 0",
            "a=sendrecv",
            "m=audio 5004 RTP/SAVP 0",  # SRTP only: refused stream
            "m=audio 6000 RTP/AVP 96 9 0 8 97 101",
            "c=IN IP4 127.0.0.1",  # the media-level address wins
            "a=rtpmap:96 opus/48000/2",
            "a=rtpmap:97 telephone-event/16000",
            "a=rtpmap:101 telephone-event/8000",
            "a=fmtp:101 0-16",
            "a=ptime:30",
            "a=rtcp-mux",
            "a=ssrc:12345 cname:abc",
            "a=rtcp:6001 IN IP4 127.0.0.1",
            "m=video 6002 RTP/AVP 99",
            "a=rtpmap:99 VP8/90000",
            "",
        ]
    )
    offer = sipmsg.parse(message(*BASIC, body=sdp)).sdp
    assert offer is not None
    assert (offer.address, offer.port, offer.ptime) == ("127.0.0.1", 6000, 30)
    assert offer.codecs == ((0, "PCMU"), (8, "PCMA"), (101, "telephone-event"))
    assert offer.dropped_streams == 2
    pyvoip = through_pyvoip(message(*BASIC, body=sdp))
    assert pyvoip.body["m"][0]["methods"] == ["0", "8", "101"]
    assert [c["address"] for c in pyvoip.body["c"]] == ["127.0.0.1"]


@pytest.mark.parametrize(
    ("sdp_tail", "held"),
    [("a=sendonly", True), ("a=inactive", True), ("a=recvonly", False), ("a=sendrecv", False)],
)
def test_hold_is_read_from_the_direction(sdp_tail: str, held: bool) -> None:
    offer = sipmsg.parse(message(*BASIC, body=SDP.replace("a=sendrecv", sdp_tail))).sdp
    assert offer is not None and offer.on_hold is held


def test_rfc_2543_hold_and_a_multipart_body() -> None:
    old_hold = SDP.replace("c=IN IP4 127.0.0.1", "c=IN IP4 0.0.0.0")
    assert sipmsg.parse(message(*BASIC, body=old_hold)).sdp.on_hold  # type: ignore[union-attr]
    boundary = "unique-boundary-1"
    body = (
        f"--{boundary}\r\nContent-Type: application/sdp\r\n\r\n{SDP}\r\n"
        f"--{boundary}\r\nContent-Type: application/resource-lists+xml\r\n\r\n<x/>\r\n"
        f"--{boundary}--\r\n"
    )
    lines = [line for line in BASIC if not line.startswith("Content-Type")]
    raw = message(*lines, f'Content-Type: multipart/mixed;boundary="{boundary}"', body=body)
    offer = sipmsg.parse(raw).sdp
    assert offer is not None and offer.port == 4000


def test_a_tel_caller_keeps_their_number() -> None:
    lines = [line for line in BASIC if not line.startswith("From")]
    raw = message(*lines, "From: <tel:+15550123;phone-context=example.com>;tag=t1", body=SDP)
    assert through_pyvoip(raw).headers["From"]["number"] == "+15550123"


@pytest.mark.parametrize(
    ("change", "status"),
    [
        (("CSeq: 1 INVITE", "CSeq: 1 BYE"), 400),
        (("CSeq: 1 INVITE", "CSeq: 4294967296 INVITE"), 400),
        (("Call-ID: 1@x", "Call-ID: 1@x\r\nCall-ID: 2@x"), 400),
        (("Call-ID: 1@x", "X-Not-A-Call-ID: 1@x"), 400),
        (("5070 SIP/2.0", "5070 SIP/7.0"), 505),
        (('"Alice" <sip', '"Alice <sip'), 400),
        (('"Alice" <sip', "Alice, Bob <sip"), 400),
        (("sip:pharmacy@127.0.0.1:5070 SIP", "<sip:pharmacy@127.0.0.1:5070> SIP"), 400),
        (("INVITE sip", "INVITE  sip"), 400),
        (("m=audio 4000 RTP/AVP 0 8 101", "m=audio 4000 RTP/AVP 18"), 488),
        (("c=IN IP4 127.0.0.1", "a=c-line-gone"), 488),
        ((f"Content-Length: {len(SDP)}", "Content-Length: 9999"), 400),
    ],
)
def test_what_the_grammar_forbids_is_refused_with_its_status(
    change: tuple[str, str], status: int
) -> None:
    old, new = change
    raw = message(*BASIC, body=SDP)
    bad = message(*(line.replace(old, new) for line in BASIC), body=SDP.replace(old, new))
    if bad == raw:  # a change to what message() writes itself
        bad = raw.replace(old.encode(), new.encode())
    assert bad != raw
    with pytest.raises(SipError) as refused:
        sipmsg.parse(bad)
    assert refused.value.status == status


@pytest.mark.parametrize(
    ("change", "status", "header"),
    [
        (("INVITE sip:", "SUBSCRIBE sip:"), 405, "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO"),
        (("INVITE sip:pharmacy@", "INVITE mailto:pharmacy@"), 416, None),
        (("Call-ID: 1@x", "Call-ID: 1@x\r\nRequire: nothingweknow"), 420, "Unsupported: nothingweknow"),
    ],
)  # fmt: skip
def test_what_a_uas_refuses(change: tuple[str, str], status: int, header: str | None) -> None:
    raw = message(*BASIC, body=SDP).replace(change[0].encode(), change[1].encode(), 1)
    raw = raw.replace(b"CSeq: 1 INVITE", b"CSeq: 1 SUBSCRIBE") if status == 405 else raw
    parsed = sipmsg.parse(raw)
    with pytest.raises(SipError) as refused:
        sipmsg.check_request(parsed)
    assert refused.value.status == status
    if header is not None:
        assert header in refused.value.extra
    reply = sipmsg.response(parsed, status, refused.value.extra).decode()
    assert reply.startswith(f"SIP/2.0 {status} ")
    assert "Call-ID: 1@x" in reply and ";tag=" in reply.split("\r\nTo: ")[1].split("\r\n")[0]


def test_trailing_bytes_past_content_length_are_dropped() -> None:
    raw = message(*BASIC, body=SDP) + b"INVITE sip:another@x SIP/2.0\r\n\r\n"
    assert sipmsg.parse(raw).body == SDP.encode()


def test_info_carries_a_key() -> None:
    lines = [line.replace("INVITE", "INFO") for line in BASIC if "Content-Type" not in line]
    raw = message(
        *lines, "Content-Type: application/dtmf-relay", body="Signal=5\r\nDuration=160\r\n"
    )
    assert sipmsg.info_dtmf(sipmsg.parse(raw)) == "5"
    raw = message(*lines, "Content-Type: application/dtmf", body="#")
    assert sipmsg.info_dtmf(sipmsg.parse(raw)) == "#"


@pytest.mark.parametrize("number", ["²", "١٢", "9" * 5000])
def test_numbers_are_ascii_and_short_or_refused(number: str) -> None:
    """int() reads "²" and "١٢", and a 5,000-digit number slowly: none reaches it."""
    for raw in (
        message(*BASIC, body=SDP).replace(
            f"Content-Length: {len(SDP)}".encode(), f"Content-Length: {number}".encode()
        ),
        message(*BASIC, f"Max-Forwards: {number}", body=SDP),
        message(*BASIC, body=SDP).replace(b"CSeq: 1 INVITE", f"CSeq: {number} INVITE".encode()),
        message(*BASIC, body=SDP.replace("m=audio 4000", f"m=audio {number}")),
        message(*BASIC, body=SDP).replace(
            b"127.0.0.1:5080;branch", f"127.0.0.1:{number};branch".encode()
        ),
    ):
        with pytest.raises(SipError):
            sipmsg.parse(raw)


def test_ipv6_and_host_names_in_c_are_refused_with_488() -> None:
    for address in ("IP6 2001:db8::1", "IP4 phone.example.com"):
        with pytest.raises(SipError) as refused:
            sipmsg.parse(
                message(*BASIC, body=SDP.replace("IP4 127.0.0.1\r\nt=", f"{address}\r\nt="))
            )
        assert refused.value.status == 488


def test_the_bye_goes_to_the_contact_through_the_record_route() -> None:
    raw = message(
        *BASIC,
        "Record-Route: <sip:proxy1.example.com;lr>",
        "Record-Route: <sip:proxy2.example.com;lr>",
        body=SDP,
    ).replace(
        b"Contact: <sip:+15550100@127.0.0.1:5080>",
        b'Contact: "A" <sip:+15550100@127.0.0.1:5080;transport=udp>;+sip.instance="<urn:x>"',
    )
    invite = sipmsg.parse(sipmsg.parse(raw).canonical())  # what pyVoIP keeps of the INVITE
    bye = sipmsg.parse(
        sipmsg.bye(
            invite,
            local_tag="ours",
            via="SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKb",
            contact="<sip:g@127.0.0.1:5070>",
            cseq=2,
        )
    )
    assert bye.uri == "sip:+15550100@127.0.0.1:5080;transport=udp"
    assert bye.all("Route") == ["<sip:proxy1.example.com;lr>, <sip:proxy2.example.com;lr>"]
    assert (bye.from_.tag, bye.to.tag) == ("ours", "abc")  # From and To swapped
    assert [v.host for v in bye.vias] == ["127.0.0.1"]  # our Via, not the caller's


def test_contact_star_is_only_for_register() -> None:
    with pytest.raises(SipError):
        sipmsg.parse(
            message(*BASIC, body=SDP).replace(
                b"Contact: <sip:+15550100@127.0.0.1:5080>", b"Contact: *"
            )
        )
