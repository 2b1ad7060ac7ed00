"""``format`` as regular expressions over the decoded string, for the formats that have an exact
(or exactly conservative) one.

Each expression admits only texts the specification calls valid for that format, so every
generated string passes a format checker; where the full language is not regular enough to be
worth it, the expression is a documented subset (the instance is then refused by the grammar, never
accepted wrongly):

* ``date``: RFC 3339 ``full-date``, years 0001-9999, days per month, 29 February in leap years
  (divisible by 4, centuries only when divisible by 400), as ``datetime.date`` counts them.
* ``time``: RFC 3339 ``full-time`` with upper-case ``Z``; no leap second (``:60``), whose validity
  depends on the offset.
* ``date-time``: ``date`` ``T`` ``time``.
* ``uuid``: RFC 4122 hex groups 8-4-4-4-12, either case.
* ``ipv4``: dotted quad, each part 0-255 without leading zeros.
* ``email``: a dot-atom local part and a host name of letters, digits and inner hyphens (no
  quoted local parts, no address literals).
* ``hostname``: RFC 1123 labels (letters, digits, inner hyphens, 1-63 characters) joined by dots,
  at most 253 characters (``FORMAT_MAX_LENGTH``), no trailing dot; what the ``fqdn`` package,
  ``jsonschema``'s checker, calls valid with one label allowed.
* ``ipv6``: eight groups of 1-4 hex digits, or fewer around one ``::``; no embedded IPv4 tail and
  no zone (``%eth0``, which ``jsonschema`` rejects).

Other formats raise ``UnsupportedSchemaError``; ``compile_json_schema(..., formats="annotation")``
treats every ``format`` as the annotation the specification also allows it to be.
"""

from __future__ import annotations

_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_YEAR = "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_HEX = "[0-9a-fA-F]"
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_H16 = "[0-9a-fA-F]{1,4}"

#: format name -> Python regular expression (full-match semantics, ASCII only)
FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}T{_TIME}",
    "uuid": f"{_HEX}{{8}}-(?:{_HEX}{{4}}-){{3}}{_HEX}{{12}}",
    "ipv4": rf"{_OCTET}(?:\.{_OCTET}){{3}}",
    "email": rf"{_ATEXT}+(?:\.{_ATEXT}+)*@{_LABEL}(?:\.{_LABEL})*",
    "hostname": rf"{_LABEL}(?:\.{_LABEL})*",
    "ipv6": "(?:" + "|".join([
        f"(?:{_H16}:){{7}}{_H16}",
        f"(?:{_H16}:){{1,7}}:",
        *(f"(?:{_H16}:){{1,{6 - k}}}(?::{_H16}){{1,{k + 1}}}" for k in range(6)),
        f":(?:(?::{_H16}){{1,7}}|:)",
    ]) + ")",
}

#: Formats whose expression above needs a length bound too (characters of the decoded string).
FORMAT_MAX_LENGTH: dict[str, int] = {"hostname": 253}
