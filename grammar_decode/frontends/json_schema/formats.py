"""``format`` as regular expressions over the decoded string, for the formats that have an exact
(or exactly conservative) one.

Each expression admits only texts the specification calls valid for that format, so every
generated string passes a format checker; where the full language is not regular enough to be
worth it, the expression is a documented subset (the instance is then refused by the grammar, never
accepted wrongly):

* ``date``: RFC 3339 ``full-date``, years 0001-9999, days per month, 29 February in leap years
  (divisible by 4, centuries only when divisible by 400), as ``datetime.date`` counts them.
* ``time``: RFC 3339 ``full-time``, ``Z`` in either case (RFC 3339 section 5.6 allows it); no
  leap second (``:60``): ``rfc3339-validator``, ``jsonschema``'s checker, refuses every one.
* ``date-time``: ``date`` ``T`` (either case) ``time``.
* ``uuid``: RFC 4122 hex groups 8-4-4-4-12, either case.
* ``ipv4``: dotted quad, each part 0-255 without leading zeros.
* ``email``: RFC 5321's mailbox: a dot-atom or a quoted string (printable ASCII, ``\\`` pairs)
  before the ``@``; after it a host name of letters, digits and inner hyphens, or an address
  literal ``[192.0.2.1]`` / ``[IPv6:2001:db8::1]``. (``jsonschema`` checks only that an ``@`` is
  there.)
* ``hostname``: RFC 1123 labels (letters, digits, inner hyphens, 1-63 characters) joined by dots,
  at most 253 characters (``FORMAT_MAX_LENGTH``), no trailing dot; what the ``fqdn`` package,
  ``jsonschema``'s checker, calls valid with one label allowed, made exact under IDNA (RFC 5890):
  no label has ``--`` as its third and fourth characters unless it is an A-label (``xn--...``)
  that decodes to a valid U-label, which the lexeme's guard checks as it is written
  (``a_labels``: Punycode validity is not a regular language). Labels of up to about 54
  characters; without the ``idna`` package, no A-label at all.
* ``idn-hostname``: its ASCII subset, the ``hostname`` language above (every such name is a
  valid IDNA2008 name made of NR-LDH labels).
* ``idn-email``: its ASCII subset, the ``email`` language above.
* ``uri-template``: RFC 6570's ABNF (literals, with the apostrophe its erratum 6937 adds;
  ``{`` operator? varspec list ``}``, prefix lengths 1-9999, the explode modifier).
* ``regex``: a subset of the expressions both Python's ``re`` (``jsonschema``'s checker) and
  ECMA-262 with the ``u`` flag compile: literal characters, ``.``, the escapes
  ``\\d \\D \\w \\W \\s \\S \\n \\r \\t`` and escaped syntax characters, classes
  ``[...]``/``[^...]`` of such characters without ranges (nor ``& | ~``, which Python reads
  doubled as set operations to come, nor an unescaped ``^`` inside: ``[^]`` is a class in
  ECMA-262 and an unterminated one in Python), groups ``(...)``/``(?:...)`` nested
  at most three deep with ``|`` inside and at the top, ``^`` and ``$``, and the quantifiers
  ``* + ?`` (each perhaps lazy) after an atom. Ranges, counted repeats, lookaround and
  backreferences are left out.
* ``byte`` (OpenAPI): base64 (RFC 4648 section 4) with padding, as OpenAPI defines it;
  ``jsonschema`` reads no ``byte`` format, so any string would validate, and this admits fewer.
* ``ipv6``: RFC 3986's ``IPv6address``: eight groups of 1-4 hex digits, or fewer around one
  ``::``, the last two groups possibly written as an IPv4 address (``::ffff:192.0.2.1``); no
  zone (``%eth0``, which ``jsonschema`` rejects).
* ``uri``, ``uri-reference``: RFC 3986's ABNF (appendix A) transcribed rule by rule; an IPv4
  address inside an IPv6 literal is written without leading zeros (the ABNF's ``dec-octet``;
  ``rfc3987`` and ``rfc3986-validator``, the packages ``jsonschema`` checks these with, also
  take ``01``). No trailing newline, which both packages let through (their ``$``).
* ``iri``, ``iri-reference``: RFC 3987's ABNF, the same rules over ``iunreserved`` (adding the
  ``ucschar`` ranges) and ``iprivate`` in the query.
* ``duration``: RFC 3339 appendix A (``P1Y2M3DT4H5M6S``, ``P2W``): digits only, each unit at most
  once in order, a week alone, no unit skipped inside a date or time run (``P1Y1D`` is not in the
  ABNF though ``isoduration``, ``jsonschema``'s checker, takes it).
* ``json-pointer``: RFC 6901, ``~`` only as ``~0`` or ``~1``.
* ``relative-json-pointer``: a non-negative integer, then ``#`` or a JSON pointer. The integer
  has no digit after a ``0`` (``0``, ``7``, ``120``, but not ``100``): ``jsonschema``'s checker
  rejects a digit that follows a zero, so ``100`` is left out to agree with it.

Formats no supported draft defines are annotations (every validator ignores them), but for
OpenAPI's: ``byte`` is enforced as above, ``int32``/``int64`` bound numbers to the signed 32- and
64-bit ranges (``NUMBER_FORMATS``, read beside ``minimum``/``maximum``), and ``float``,
``double``, ``binary``, ``password`` stay annotations (a JSON number has no width; ``binary`` is
any octets; ``password`` is a display hint). Under ``unknown_keywords="error"`` a format no draft
defines is refused instead. A format some draft defines that has no expression here
(``DRAFT_FORMATS`` minus ``FORMATS``: none at present) raises ``UnsupportedSchemaError``;
``compile_json_schema(..., formats="annotation")`` treats every ``format`` as the annotation the
specification also allows it to be.
"""

from __future__ import annotations

__all__ = ["DRAFT_FORMATS", "FORMATS", "FORMAT_MAX_LENGTH", "HOSTNAME_WITH_A_LABELS", "NUMBER_FORMATS"]

_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_YEAR = "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"  # RFC 3986's dec-octet: no leading zero
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_HEX = "[0-9a-fA-F]"
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_LD = "[A-Za-z0-9]"
_LDH = "[A-Za-z0-9-]"
# a label of 1-63 letters, digits and inner hyphens whose third and fourth characters are not both
# hyphens (RFC 5891 section 4.2.3.1: no reserved LDH label, so no A-label)
_NR_LABEL = (f"(?:{_LD}(?:{_LDH}?{_LD})?"  # 1-3 characters
             f"|{_LD}{_LDH}(?:{_LDH}{_LD}|(?:{_LD}{_LDH}|-{_LD}){_LDH}{{0,58}}{_LD}))")  # 4, or 5-63
# an A-label: ``xn--`` in any case, then letters, digits and hyphens, 5-63 characters in all, not
# ending in a hyphen; which of them decode to valid U-labels the lexer's guard checks (a_labels)
_A_LABEL = f"[Xx][Nn]--(?:{_LDH}{{0,58}}{_LD})"
_H16 = "[0-9a-fA-F]{1,4}"

# RFC 3986 appendix A; the i-prefixed rules are RFC 3987's, over a wider ``unreserved``.
_PCT = "%[0-9A-Fa-f]{2}"
_SUB = "!$&'()*+,;="
_UNRESERVED = "A-Za-z0-9._~\\-"
_UCSCHAR = ("\\xA0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF" + "".join(
    f"\\U{plane:04X}0000-\\U{plane:04X}FFFD" for plane in range(1, 15)).replace("\\U000E0000", "\\U000E1000"))
_IPRIVATE = "\\uE000-\\uF8FF\\U000F0000-\\U000FFFFD\\U00100000-\\U0010FFFD"
# RFC 3986's IPv6address, an IPv4 tail (ls32) included
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "(?:" + "|".join([
    f"(?:{_H16}:){{6}}{_LS32}",
    f"::(?:{_H16}:){{5}}{_LS32}",
    *(f"(?:(?:{_H16}:){{0,{k}}}{_H16})?::(?:{_H16}:){{{4 - k}}}{_LS32}" for k in range(4)),
    f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
]) + ")"


def _uri_rules(unreserved: str, private: str) -> tuple[str, str]:
    """(absolute form, reference form) of RFC 3986 (``unreserved`` ASCII, ``private`` empty) or
    RFC 3987 (``ucschar`` added to ``unreserved``, ``iprivate`` allowed in the query)."""
    pchar = f"(?:[{unreserved}{_SUB}:@]|{_PCT})"
    authority = (f"(?:(?:[{unreserved}{_SUB}:]|{_PCT})*@)?"  # userinfo
                 f"(?:\\[(?:{_IPV6}|v[0-9A-Fa-f]+\\.[{_UNRESERVED}{_SUB}:]+)\\]"  # IP-literal
                 f"|(?:[{unreserved}{_SUB}]|{_PCT})*)"  # reg-name (an IPv4 address is one too)
                 "(?::[0-9]*)?")  # port
    segments = f"(?:/{pchar}*)*"
    absolute_path = f"/(?:{pchar}+{segments})?"
    query = f"(?:\\?(?:{pchar}|[/?{private}])*)?(?:#(?:{pchar}|[/?])*)?"
    hier = f"(?://{authority}{segments}|{absolute_path}|{pchar}+{segments}|)"
    relative = f"(?://{authority}{segments}|{absolute_path}|(?:[{unreserved}{_SUB}@]|{_PCT})+{segments}|)"
    absolute = f"[A-Za-z][A-Za-z0-9+.-]*:{hier}{query}"
    return absolute, f"(?:{absolute}|{relative}{query})"


_URI, _URI_REFERENCE = _uri_rules(_UNRESERVED, "")
_IRI, _IRI_REFERENCE = _uri_rules(_UNRESERVED + _UCSCHAR, _IPRIVATE)
_JSON_POINTER = "(?:/(?:[^~/]|~[01])*)*"
_HOSTNAME = rf"{_NR_LABEL}(?:\.{_NR_LABEL})*"
_HOST_LABEL = f"(?:{_NR_LABEL}|{_A_LABEL})"
#: ``hostname`` with A-labels, for the lexeme that ``a_labels.A_LABELS`` guards
HOSTNAME_WITH_A_LABELS = rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*"
_EMAIL = (rf'(?:{_ATEXT}+(?:\.{_ATEXT}+)*|"(?:[ !#-\[\]-~]|\\[ -~])*")'  # dot-atom or quoted string
          rf"@(?:{_HOSTNAME}|\[{_IPV4}\]|\[IPv6:{_IPV6}\])")

# RFC 6570 section 2
_VARCHAR = f"(?:[A-Za-z0-9_]|{_PCT})"
_VARSPEC = f"{_VARCHAR}(?:\\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\\*)?"
_URI_TEMPLATE = ("(?:[!#$&-;=?-\\[\\]_a-z~" + _UCSCHAR + _IPRIVATE + f"]|{_PCT}"
                 f"|\\{{[+#./;?&=,!@|]?{_VARSPEC}(?:,{_VARSPEC})*\\}})*")


def _regex_subset(depth: int) -> str:
    """The ``regex`` format's subset (see the module text), groups nested at most ``depth`` deep."""
    syntax = r"\\^$.|?*+()\[\]{}/"
    escape = r"\\[" + syntax + r"dDwWsSnrt]"
    literal = r"[^" + syntax[:-1] + r"]"  # '/' is an ordinary character unescaped
    # no '-' (a range, perhaps reversed), none of '&|~' (doubled, Python warns of set operations),
    # and no bare '^': first in a class it is a negation, and '[^]' leaves Python's class open
    # ('^' escaped is fine)
    in_class = r"(?:[^\\\]\[&|~^-]|\\[" + syntax + r"dDwWsSnrt-])"
    atom = f"(?:{literal}|{escape}|\\.|\\[\\^?{in_class}+\\])"
    alternation = ""
    for _ in range(depth + 1):
        piece = f"(?:{atom}(?:[*+?]\\??)?|\\^|\\$)"
        alternation = f"{piece}*(?:\\|{piece}*)*"
        atom = f"(?:{atom}|\\((?:\\?:)?{alternation}\\))"
    return alternation
_DURATION = ("P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:T{time})?|T{time}|[0-9]+W)"
             .format(time="(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"))

#: format name -> Python regular expression (full-match semantics)
FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[Tt]{_TIME}",
    "uuid": f"{_HEX}{{8}}-(?:{_HEX}{{4}}-){{3}}{_HEX}{{12}}",
    "ipv4": _IPV4,
    "email": _EMAIL,
    "idn-email": _EMAIL,
    "hostname": _HOSTNAME,
    "idn-hostname": _HOSTNAME,
    "ipv6": _IPV6,
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "iri": _IRI,
    "iri-reference": _IRI_REFERENCE,
    "duration": _DURATION,
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": f"(?:0|[1-9]+0?)(?:#|{_JSON_POINTER})",
    "uri-template": _URI_TEMPLATE,
    "regex": _regex_subset(3),
    "byte": "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?",
}

from .keywords import NUMBER_FORMATS  # noqa: E402  (re-exported: the formats' whole table is here)

#: The formats some supported draft defines (drafts 4 to 2020-12).
DRAFT_FORMATS = frozenset({"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
                           "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
                           "json-pointer", "relative-json-pointer", "regex"})

#: Formats whose expression above needs a length bound too (characters of the decoded string).
FORMAT_MAX_LENGTH: dict[str, int] = {"hostname": 253, "idn-hostname": 253}
