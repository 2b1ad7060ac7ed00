"""Grammars and regexes shared by the engine tests and benchmarks, with their independent judges."""

from __future__ import annotations

import re
from typing import Callable

ARITHMETIC = r'''
start: expr
?expr: expr ("+"|"-") term | term
?term: term ("*"|"/") factor | factor
?factor: NUMBER | "(" expr ")" | "-" factor
NUMBER: /[0-9]{1,4}(\.[0-9]{1,3})?/
%ignore " "
'''

JSON_LIKE = r'''
?start: value
?value: object | array | ESCAPED_STRING | SIGNED_NUMBER | "true" | "false" | "null"
array  : "[" [value ("," value)*] "]"
object : "{" [pair ("," pair)*] "}"
pair   : ESCAPED_STRING ":" value
%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
'''

NESTED_LISTS = r'''
start: list
list: "(" item* ")"
?item: list | WORD
WORD: /[a-z]+/
%ignore /[ \n]+/
'''

GRAMMARS = {"arithmetic": ARITHMETIC, "json_like": JSON_LIKE, "nested_lists": NESTED_LISTS}

REGEXES = {
    "date": r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])",
    "email": r"[a-z0-9._%+-]{1,20}@[a-z0-9-]{1,15}(?:\.[a-z0-9-]{1,15})*\.[a-z]{2,6}",
    "quoted": r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])*"',
    "phone": r"\+?[0-9]{1,3}[ -]?\(?[0-9]{3}\)?[ -]?[0-9]{3}-[0-9]{4}",
}


def lark_judge(text: str) -> Callable[[str], bool]:
    """Lark's Earley parser with the dynamic lexer: accepts every lexing of the text."""
    import lark

    parser = lark.Lark(text, parser="earley", lexer="dynamic")

    def judge(output: str) -> bool:
        try:
            parser.parse(output)
        except lark.exceptions.LarkError:
            return False
        return True

    return judge


def regex_judge(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda output: compiled.fullmatch(output) is not None
