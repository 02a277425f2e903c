"""SIP messages as RFC 3261 writes them, read tolerantly, checked, and rewritten for pyVoIP.

pyVoIP 1.6.8 parses SIP by splitting on ``": "``, ``" "`` and ``";tag="``. Anything a
real peer may legally send outside that shape crashed it: an empty ``Supported:``
(baresip sends one on every INVITE), folded lines, compact names (``i:``, ``v:``),
``TO :``, a second ``m=`` line, an ``rtpmap`` for a codec it does not know. So every
datagram is read here first, by the grammar of RFC 3261 section 25 and RFC 4566:

- what the grammar allows is accepted, however it is spaced, cased or folded;
- what it forbids, or what a UAS must refuse (RFC 4475's invalid messages), is a
  `SipError` carrying the status to answer with;
- an accepted message is written back in the one shape pyVoIP reads (`canonical`):
  full header names, one ``Name: value`` a line, one Via a line, From and To as
  ``"name" <uri>;params;tag=…``, and an SDP offer cut down to the audio pyVoIP can
  answer (`sdp.SdpOffer`).

Pure: bytes in, values out. docs/telephony.md says why this, and not a new SIP stack.
Longer than most modules because RFC 3261's grammar is one piece (the start line,
headers, name-addrs, Via, parameters and the answers built from them refer to each
other); the SDP half is `telephony.sdp`.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from telephony import sdp

VERSION = "SIP/2.0"
# Methods this gateway acts on; the rest get 405 with this list (RFC 3261 8.2.1).
ALLOWED = ("INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "INFO")
# Methods known to SIP but not served by a gateway that only answers calls: 405, not 501.
KNOWN = ("REGISTER", "SUBSCRIBE", "NOTIFY", "REFER", "MESSAGE", "UPDATE", "PRACK", "PUBLISH")
MAX_CSEQ = 2**31 - 1  # RFC 3261 8.1.1.5
_TOKEN = r"[A-Za-z0-9\-.!%*_+`'~]+"
_TOKEN_RE = re.compile(_TOKEN)
_REQUEST_LINE = re.compile(rf"^({_TOKEN}) (\S+) (SIP/\S+)$")
_STATUS_LINE = re.compile(r"^(SIP/\S+) ([0-9]{3})(?: (.*))?$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+\-.]*):")
_SENT_PROTOCOL = re.compile(
    rf"^({_TOKEN})\s*/\s*({_TOKEN})\s*/\s*({_TOKEN})\s+([^\s;]+?)\s*(?:;(.*))?$", re.DOTALL
)

COMPACT = {
    "i": "Call-ID", "m": "Contact", "e": "Content-Encoding", "l": "Content-Length",
    "c": "Content-Type", "f": "From", "s": "Subject", "k": "Supported", "t": "To",
    "v": "Via", "o": "Event", "u": "Allow-Events", "r": "Refer-To", "b": "Referred-By",
    "x": "Session-Expires", "y": "Identity",
}  # fmt: skip
# The spelling pyVoIP compares against, for every header it reads.
CANONICAL = {
    name.lower(): name
    for name in (
        "Via", "From", "To", "Call-ID", "CSeq", "Contact", "Max-Forwards", "Content-Type",
        "Content-Length", "Content-Encoding", "Allow", "Supported", "Require", "Expires",
        "WWW-Authenticate", "Authorization", "Proxy-Authenticate", "Proxy-Authorization",
        "Record-Route", "Route", "User-Agent", "Server", "Accept", "Subject", "Event",
        "Session-Expires", "Min-SE", "Proxy-Require", "Date", "Timestamp",
    )
}  # fmt: skip
SINGLE = ("Call-ID", "CSeq", "From", "To", "Max-Forwards", "Content-Length", "Content-Type")
REQUIRED = ("Via", "From", "To", "Call-ID", "CSeq")
# Header values are comma lists, except these, whose grammar has commas inside a value.
_NOT_LISTS = {
    "www-authenticate", "authorization", "proxy-authenticate", "proxy-authorization",
    "date", "subject", "user-agent", "server", "warning", "retry-after",
}  # fmt: skip


class SipError(ValueError):
    """A message to refuse: `status` is what to answer, if it is a request."""

    def __init__(self, status: int, reason: str, extra: tuple[str, ...] = ()) -> None:
        super().__init__(f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.extra = extra  # headers the refusal must carry (Allow, Unsupported, Accept)


REASONS = {
    200: "OK", 400: "Bad Request", 405: "Method Not Allowed", 406: "Not Acceptable", 415: "Unsupported Media Type",
    416: "Unsupported URI Scheme", 420: "Bad Extension", 481: "Call/Transaction Does Not Exist",
    488: "Not Acceptable Here", 501: "Not Implemented", 505: "Version Not Supported",
    513: "Message Too Large",
}  # fmt: skip


def _render(params: tuple[tuple[str, str | None], ...]) -> str:
    return "".join(f";{k}" if v is None else f";{k}={v}" for k, v in params)


@dataclass(frozen=True, slots=True)
class NameAddr:
    """From, To or Contact: ``"display" <uri>;params``, or an addr-spec with params."""

    display: str | None
    uri: str
    params: tuple[tuple[str, str | None], ...]

    def param(self, name: str) -> str | None:
        return next((v for k, v in self.params if k == name), None)

    @property
    def tag(self) -> str | None:
        return self.param("tag")

    @property
    def user(self) -> str | None:
        """The user part of a sip:/sips: URI, or the number of a tel: one."""
        scheme, _, rest = self.uri.partition(":")
        if scheme.lower() == "tel":
            return rest.split(";", 1)[0] or None
        userinfo, at, _ = rest.partition("@")
        return userinfo.split(":", 1)[0] or None if at else None

    def text(self) -> str:
        escaped = (self.display or "").replace("\\", "\\\\").replace('"', '\\"')
        name = f'"{escaped}" ' if self.display else ""
        return f"{name}<{self.uri}>{_render(self.params)}"


@dataclass(frozen=True, slots=True)
class Via:
    transport: str
    host: str
    port: int | None
    params: tuple[tuple[str, str | None], ...]

    def text(self) -> str:
        port = f":{self.port}" if self.port is not None else ""
        return f"SIP/2.0/{self.transport} {self.host}{port}{_render(self.params)}"


@dataclass(frozen=True, slots=True)
class SipMessage:
    method: str | None  # None for a response
    uri: str | None
    status: int | None
    reason: str | None
    headers: tuple[tuple[str, str], ...]  # (canonical name, unfolded value), in order
    body: bytes
    vias: tuple[Via, ...]
    from_: NameAddr
    to: NameAddr
    call_id: str
    cseq: int
    cseq_method: str
    sdp: sdp.SdpOffer | None

    def get(self, name: str) -> str | None:
        key = CANONICAL.get(name.lower(), name).lower()
        return next((v for n, v in self.headers if n.lower() == key), None)

    def all(self, name: str) -> list[str]:
        key = CANONICAL.get(name.lower(), name).lower()
        return [v for n, v in self.headers if n.lower() == key]

    @property
    def is_request(self) -> bool:
        return self.method is not None

    def canonical(self) -> bytes:
        """The message in the shape pyVoIP 1.6.8's parser reads without tripping."""
        if self.method is not None:
            lines = [f"{self.method} {self.uri} {VERSION}"]
        else:
            lines = [f"{VERSION} {self.status} {self.reason or REASONS.get(self.status or 0, '')}"]
        lines += [f"Via: {via.text()}" for via in self.vias]
        lines.append(f"From: {_for_pyvoip(self.from_)}")
        lines.append(f"To: {_for_pyvoip(self.to)}")
        lines.append(f"Call-ID: {self.call_id}")
        lines.append(f"CSeq: {self.cseq} {self.cseq_method}")
        skip = {"via", "from", "to", "call-id", "cseq", "content-length", "content-type"}
        merged: dict[str, list[str]] = {}
        for name, value in self.headers:
            if name.lower() in skip or not value:
                continue  # an empty value (Supported:) is legal, and pyVoIP's IndexError
            merged.setdefault(name, []).append(value)
        for name, values in merged.items():
            if name == "Contact":
                values = (_items(values[0]) or values)[:1]
            elif name in ("WWW-Authenticate", "Proxy-Authenticate"):
                # pyVoIP answers MD5 only: of several challenges (RFC 8760), that one.
                md5 = [
                    v for v in values if re.search(r"algorithm\s*=\s*\"?(?!md5\b)", v, re.I) is None
                ]
                values = (md5 or values)[:1]
            elif name.lower() in _NOT_LISTS:
                values = values[:1]
            # pyVoIP reads one line a name: a list spread over lines (Record-Route) is joined.
            lines.append(f"{name}: {_flat(', '.join(values))}")
        if "Contact" not in merged and self.method == "INVITE":
            # RFC 2543 allowed an INVITE without Contact; the From is its remote target.
            lines.append(f"Contact: <{self.from_.uri}>")
        # pyVoIP reads nothing of the offer's o= line but splits it on "=": ours is plain.
        body = self.sdp.text(f"- 0 0 IN IP4 {self.sdp.address}") if self.sdp is not None else b""
        if body:
            lines.append("Content-Type: application/sdp")
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _flat(value: str) -> str:
    # pyVoIP takes a header's value as what lies between its first and second ": ".
    return value.replace(": ", ":")


def _for_pyvoip(address: NameAddr) -> str:
    """pyVoIP splits on ";tag=" and needs "sip:" before the address: tag last, sip: kept,
    and no other ";tag=" (a display name's, a URI parameter's) before it."""
    params = [(k, v) for k, v in address.params if k != "tag"]
    if address.tag is not None:
        params.append(("tag", address.tag))
    uri = address.uri
    scheme, _, rest = uri.partition(":")
    if scheme.lower() in ("sip", "sips"):
        # Schemes are case-insensitive (SIP:, Sip:), and pyVoIP splits on "sip:" alone:
        # it reads no sips:, so a sips: caller is written sip: for it.
        uri = "sip:" + rest
    else:
        # pyVoIP reads only sip: addresses; a tel: caller keeps their number as the user.
        uri = f"sip:{address.user or 'anonymous'}@invalid;user=phone"
    uri = re.sub(r";tag=", ";tag_=", uri, flags=re.IGNORECASE)
    display = address.display and re.sub(r";\s*tag\s*=", "; tag_=", address.display, flags=re.I)
    return _flat(NameAddr(display, uri, tuple(params)).text())


# ---------------------------------------------------------------------------- parsing


def parse(raw: bytes) -> SipMessage:
    """Read one datagram. Raises SipError (with the status to answer) when it must be refused."""
    if len(raw) > 65535:
        raise SipError(513, "message too large")
    head, body = _split(raw)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        raise SipError(400, "the header is not UTF-8") from None
    lines = _unfold(text)
    if not lines:
        raise SipError(400, "empty message")
    start, header_lines = lines[0], lines[1:]
    method = uri = reason = None
    status = None
    request = _REQUEST_LINE.match(start)
    response = _STATUS_LINE.match(start)
    if request:
        method, uri, version = request.groups()
        _check_uri(uri)
    elif response and response.group(1).upper().startswith("SIP/"):
        version, code, reason = response.group(1), int(response.group(2)), response.group(3)
        if not 100 <= code <= 699:
            raise SipError(400, f"status code {code} is out of range")
        status = code
    else:
        raise SipError(400, "the first line is neither a request nor a status line")
    if version.upper() != VERSION:
        raise SipError(505, f"{version} is not supported")
    headers = tuple(_header(line) for line in header_lines)
    names = [name for name, _ in headers]
    for name in REQUIRED:
        if name not in names:
            raise SipError(400, f"{name} is missing")
    for name in SINGLE:
        value = _value(headers, name)
        # A Call-ID is a word that may hold quotes and <>, but never a comma.
        several = "," in (value or "") if name == "Call-ID" else len(_items(value)) > 1
        if names.count(name) > 1 or several:
            raise SipError(400, f"{name} appears more than once")
    call_id = _value(headers, "Call-ID")
    if not call_id or any(c.isspace() for c in call_id):
        raise SipError(400, "bad Call-ID")
    cseq, cseq_method = _cseq(_value(headers, "CSeq"))
    if method is not None and cseq_method != method:
        raise SipError(400, f"CSeq says {cseq_method} on a {method}")
    max_forwards = _value(headers, "Max-Forwards")
    hops = None if max_forwards is None else _digits(max_forwards, 10)
    if max_forwards is not None and (hops is None or hops > 255):
        raise SipError(400, "bad Max-Forwards")
    for name in ("Expires",):
        value = _value(headers, name)
        if value is not None and _digits(value, 10) is None:
            raise SipError(400, f"bad {name}")
    body = _body(headers, body)
    vias = tuple(_via(item) for value in _values(headers, "Via") for item in _items(value))
    if not vias:
        raise SipError(400, "Via is empty")
    from_ = _name_addr(_value(headers, "From"), "From")
    to = _name_addr(_value(headers, "To"), "To")
    for value in _values(headers, "Contact"):
        if value.strip() == "*" and method != "REGISTER":
            raise SipError(400, "Contact: * belongs to a REGISTER")  # RFC 3261 10.2.2
        if value.strip() != "*":
            for item in _items(value):
                _name_addr(item, "Contact")
    sdp = _sdp(headers, body) if method in ("INVITE", "ACK") or status == 200 else None
    return SipMessage(
        method, uri, status, reason, headers, body, vias, from_, to, call_id, cseq, cseq_method, sdp
    )


def check_request(message: SipMessage) -> None:
    """What a UAS refuses of a well-formed request (RFC 3261 8.2): method, scheme, Require."""
    assert message.method is not None
    if message.method not in ALLOWED:
        status = 405 if message.method in KNOWN else 501  # RFC 3261 8.2.1
        raise SipError(
            status, f"{message.method} is not handled", (f"Allow: {', '.join(ALLOWED)}",)
        )
    scheme = _SCHEME.match(message.uri or "")
    if scheme is None or scheme.group(1).lower() not in ("sip", "sips", "tel"):
        raise SipError(416, "only sip, sips and tel URIs are served")
    required = [t for v in message.all("Require") for t in _items(v)]
    if required and message.method not in ("ACK", "CANCEL"):
        unsupported = ", ".join(required)
        raise SipError(420, "no extension is supported", (f"Unsupported: {unsupported}",))
    if message.get("Content-Encoding") and message.body:
        raise SipError(415, "encoded bodies are not read", ("Accept-Encoding: identity",))
    accept = [t.split(";")[0].strip().lower() for v in message.all("Accept") for t in _items(v)]
    if (
        message.method == "INVITE"
        and accept
        and not {"application/sdp", "application/*", "*/*"} & set(accept)
    ):
        # Our answer is SDP, which the caller says it cannot read (RFC 3261 21.4.7).
        raise SipError(406, "the answer would be application/sdp", ("Accept: application/sdp",))


def _split(raw: bytes) -> tuple[bytes, bytes]:
    raw = raw.lstrip(b"\r\n")  # RFC 3261 7.5: ignore CRLFs before the start line
    for separator in (b"\r\n\r\n", b"\n\n"):
        head, found, body = raw.partition(separator)
        if found:
            return head, body
    return raw, b""


def _unfold(text: str) -> list[str]:
    lines: list[str] = []
    for line in re.split(r"\r?\n", text):
        if line[:1] in (" ", "\t") and len(lines) > 1:
            lines[-1] = lines[-1].rstrip() + " " + line.strip()
        elif line[:1] in (" ", "\t"):
            raise SipError(400, "the start line is folded")
        elif line:
            lines.append(line)
    return lines


def _header(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    name = name.strip()
    if not colon or not _TOKEN_RE.fullmatch(name):
        raise SipError(400, f"not a header line: {line[:40]!r}")
    lower = name.lower()
    full = COMPACT.get(lower, CANONICAL.get(lower, name))
    return CANONICAL.get(full.lower(), full), value.strip()


def _value(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    return next((v for n, v in headers if n == name), None)


def _values(headers: tuple[tuple[str, str], ...], name: str) -> list[str]:
    return [v for n, v in headers if n == name]


def _items(value: str | None) -> list[str]:
    """A comma list, split outside quotes and angle brackets; empty items dropped."""
    if value is None:
        return []
    return [item.strip() for item in _split_outside(value, ",", angles=True) if item.strip()]


def _digits(text: str, most: int) -> int | None:
    """An ASCII decimal of at most `most` digits: int() would also take "²" or "١٢",
    and spend quadratic time on a 100,000-digit number."""
    return int(text) if re.fullmatch(rf"[0-9]{{1,{most}}}", text) else None


def _check_uri(uri: str) -> None:
    if uri.startswith("<") or not _SCHEME.match(uri):
        raise SipError(400, f"bad Request-URI {uri[:40]!r}")
    if uri.lower().startswith(("sip:", "sips:")) and "?" in uri.rpartition("@")[2]:
        raise SipError(400, "a Request-URI may not carry headers")  # RFC 3261 19.1.5
    if re.search(r"%(?![0-9A-Fa-f]{2})", uri):
        raise SipError(400, "bad escape in the Request-URI")


def _cseq(value: str | None) -> tuple[int, str]:
    match = re.fullmatch(rf"([0-9]{{1,10}})[ \t]+({_TOKEN})", value or "")
    if match is None:
        raise SipError(400, f"bad CSeq {value!r}")
    number = int(match.group(1))
    if number > MAX_CSEQ:
        raise SipError(400, "CSeq is out of range")
    return number, match.group(2)


def _body(headers: tuple[tuple[str, str], ...], body: bytes) -> bytes:
    length = _value(headers, "Content-Length")
    if length is None:
        return body  # UDP: the datagram ends the body
    size = _digits(length, 10)
    if size is None:
        raise SipError(400, "bad Content-Length")
    if size > len(body):
        raise SipError(400, f"Content-Length {size} is longer than the {len(body)}-byte body")
    return body[:size]  # RFC 3261 18.3: the rest of the datagram is discarded


def _params(text: str, where: str) -> tuple[tuple[str, str | None], ...]:
    params: list[tuple[str, str | None]] = []
    for part in _split_outside(text, ";"):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not _TOKEN_RE.fullmatch(key) or (eq and not value):
            raise SipError(400, f"bad parameter {part[:30]!r} in {where}")
        params.append((key.lower(), value if eq else None))
    return tuple(params)


def _split_outside(text: str, separator: str, *, angles: bool = False) -> list[str]:
    """Split at `separator` outside quoted strings (and <…> when `angles`)."""
    parts: list[str] = []
    current: list[str] = []
    quoted, angle, escaped = False, 0, False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\" and quoted:
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif angles and not quoted and ch in "<>":
            angle += 1 if ch == "<" else -1
        elif ch == separator and not quoted and angle == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quoted or angle:
        raise SipError(400, "unbalanced quotes or angle brackets")
    parts.append("".join(current))
    return parts


def _via(item: str) -> Via:
    match = _SENT_PROTOCOL.match(item)
    if match is None:
        raise SipError(400, f"bad Via {item[:40]!r}")
    name, version, transport, sent_by, params = match.groups()
    if f"{name}/{version}".upper() != VERSION:
        raise SipError(400, f"Via names {name}/{version}")
    host, port = sent_by, None
    if sent_by.startswith("["):
        host, _, rest = sent_by.partition("]")
        host += "]"
        if rest.startswith(":"):
            port = _port(rest[1:])
    elif ":" in sent_by:
        host, _, number = sent_by.partition(":")
        port = _port(number)
    if not re.fullmatch(r"[A-Za-z0-9\-.\[\]:]+", host):
        raise SipError(400, f"bad Via host {host[:40]!r}")
    return Via(transport.upper(), host, port, _params(params or "", "Via"))


def _port(text: str) -> int:
    port = _digits(text, 5)
    if port is None or not 0 < port < 65536:
        raise SipError(400, f"bad port {text[:10]!r}")
    return port


def _name_addr(value: str | None, where: str) -> NameAddr:
    value = (value or "").strip()
    if "<" in value:
        display_text, _, rest = value.partition("<")
        uri, close, params = rest.partition(">")
        if not close:
            raise SipError(400, f"unclosed < in {where}")
        display = _display(display_text.strip(), where)
    else:
        # An addr-spec: the URI ends at the first ';' (RFC 3261 20.10), and it may
        # not hold a comma, a question mark or a semicolon of its own.
        uri, _, params = value.partition(";")
        display = None
        if any(c in uri for c in ",?") or " " in uri.strip():
            raise SipError(400, f"an addr-spec in {where} must be inside <>")
    uri = uri.strip()
    if not _SCHEME.match(uri) or any(c.isspace() for c in uri):
        raise SipError(400, f"bad URI in {where}")
    return NameAddr(display, uri, _params(params, where))


def _display(text: str, where: str) -> str | None:
    if not text:
        return None
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2 or _unescaped_quote(text[1:-1]):
            raise SipError(400, f"bad quoted display name in {where}")
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if not all(_TOKEN_RE.fullmatch(word) for word in text.split()):
        raise SipError(400, f"a display name in {where} with separators must be quoted")
    return text


def _unescaped_quote(text: str) -> bool:
    return re.search(r'(?<!\\)(?:\\\\)*"', text) is not None


def _sdp(headers: tuple[tuple[str, str], ...], body: bytes) -> sdp.SdpOffer | None:
    if not body.strip():
        return None
    kind = (_value(headers, "Content-Type") or "application/sdp").split(";")[0].strip().lower()
    if kind.startswith("multipart/"):
        body = sdp.multipart_part(_value(headers, "Content-Type") or "", body)
    elif kind != "application/sdp":
        raise SipError(415, f"{kind} is not read", ("Accept: application/sdp",))
    try:
        return sdp.parse_sdp(body)
    except sdp.SdpError as exc:
        raise SipError(exc.status, exc.reason, exc.extra) from None


# ---------------------------------------------------------------------------- answers


def response(message: SipMessage, status: int, extra: tuple[str, ...] = (), tag: str = "") -> bytes:
    """A response to a parsed request, echoing what RFC 3261 8.2.6.2 says it must."""
    lines = [f"{VERSION} {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"Via: {value}" for value in message.all("Via")]
    lines.append(f"From: {message.get('From')}")
    to = message.get("To") or ""
    if message.to.tag is None and status > 100:
        # The same tag for a retransmission of the request, as RFC 3261 8.2.6.2 wants.
        to += f";tag={tag or format(zlib.crc32(message.call_id.encode()), '08x')}"
    lines.append(f"To: {to}")
    lines.append(f"Call-ID: {message.call_id}")
    lines.append(f"CSeq: {message.cseq} {message.cseq_method}")
    lines += list(extra)
    lines.append("Content-Length: 0")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def info_dtmf(message: SipMessage) -> str | None:
    """The key of an INFO carrying application/dtmf-relay or application/dtmf, if any."""
    kind = (message.get("Content-Type") or "").split(";")[0].strip().lower()
    text = message.body.decode("utf-8", "replace")
    if kind == "application/dtmf-relay":
        match = re.search(r"^\s*Signal\s*=\s*(\S)", text, re.IGNORECASE | re.MULTILINE)
    elif kind == "application/dtmf":
        match = re.match(r"\s*(\S)", text)
    else:
        return None
    key = match.group(1).upper() if match else None
    return key if key is not None and key in "0123456789*#ABCD" else None


def uri_of(value: str) -> str:
    """The URI of a name-addr or addr-spec: what a request to that party is sent to."""
    inside = re.search(r"<([^>]*)>", value)
    return (inside.group(1) if inside else value.split(";", 1)[0]).strip()


def bye(invite: SipMessage, *, local_tag: str, via: str, contact: str, cseq: int) -> bytes:
    """The BYE a UAS sends to end the dialog its INVITE opened (RFC 3261 12.2.1.1, 15.1.1):
    to the caller's Contact, through the Record-Route set, From and To swapped."""
    contact_value = invite.get("Contact")
    target = uri_of(_items(contact_value)[0]) if contact_value else invite.from_.uri
    to = invite.get("To") or ""
    if invite.to.tag is None:
        to += f";tag={local_tag}"
    lines = [
        f"BYE {target} {VERSION}",
        f"Via: {via}",
        "Max-Forwards: 70",
        f"From: {to}",
        f"To: {invite.get('From')}",
        f"Call-ID: {invite.call_id}",
        f"CSeq: {cseq} BYE",
    ]
    lines += [f"Route: {value}" for value in invite.all("Record-Route")]
    lines += [f"Contact: {contact}", "Content-Length: 0"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()
