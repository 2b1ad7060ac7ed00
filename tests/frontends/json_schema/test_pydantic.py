"""Pydantic models and ``TypeAdapter``s wherever a schema is accepted: their generated schemas
(optional fields, unions, discriminated unions, nested and recursive models, ``Literal``,
constrained types, ``datetime``/``UUID``/``EmailStr``) compile, and documents generated under
random logits validate with ``jsonschema`` and with the model itself."""

from __future__ import annotations

import datetime
import enum
import json
import subprocess
import sys
import uuid
from typing import Annotated, Literal, Optional, Union

import numpy as np
import pytest

import grammar_decode as gd
from helpers import REPOSITORY, require, validate

pydantic = require("pydantic")
require("email_validator")  # pydantic's EmailStr needs it

from pydantic import BaseModel, EmailStr, Field, TypeAdapter  # noqa: E402


class Country(str, enum.Enum):
    US = "US"
    CA = "CA"


class Address(BaseModel):
    street: str = Field(min_length=1, max_length=60)
    city: str
    zip: str = Field(pattern=r"^[0-9]{5}$")
    country: Country = Country.US


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=0, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]
    breed: Optional[str] = None


Pet = Annotated[Union[Cat, Dog], Field(discriminator="kind")]


class Contact(BaseModel):
    email: EmailStr
    name: str


class Person(BaseModel):
    id: uuid.UUID
    name: str = Field(min_length=1, max_length=40)
    born: datetime.date
    seen: datetime.datetime
    score: float = Field(ge=0, le=1)
    tags: list[str] = Field(default_factory=list, max_length=3)
    address: Optional[Address] = None
    pets: list[Pet] = Field(default_factory=list, max_length=2)
    nickname: Union[str, int, None] = None


class Tree(BaseModel):
    name: str = Field(max_length=8)
    children: list["Tree"] = Field(default_factory=list, max_length=2)


class Order(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-[0-9]{4}$")]
    quantity: Annotated[int, Field(gt=0, le=1000)]
    status: Literal["new", "paid", "shipped"]
    note: Optional[str] = Field(default=None, max_length=20)


SOURCES = {"Address": Address, "Person": Person, "Tree": Tree, "Order": Order, "Contact": Contact,
           "list[Order]": TypeAdapter(list[Order]), "Pet": TypeAdapter(Pet)}


#: Models whose own validation is stricter than their JSON Schema: ``EmailStr`` checks addresses
#: with ``email-validator`` (a dot in the domain, no special-use names...), beyond the ``email``
#: format the schema states, so a generated address can pass the schema and fail the model.
MODEL_STRICTER = {"Contact"}


def _schema(source: object) -> dict:
    return source.model_json_schema() if isinstance(source, type) else source.json_schema()  # type: ignore[attr-defined]


def _model_accepts(source: object, text: str) -> None:
    if isinstance(source, type):
        source.model_validate_json(text)  # type: ignore[attr-defined]
    else:
        source.validate_json(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_model_compiles_like_its_schema(name: str) -> None:
    source = SOURCES[name]
    from_model = gd.compile_json_schema(source)
    from_schema = gd.compile_json_schema(_schema(source))
    probe = {"Address": '{"street":"a","city":"b","zip":"12345"}', "Tree": '{"name":"t"}',
             "Order": '{"sku":"ABC-1234","quantity":5,"status":"new"}', "list[Order]": "[]",
             "Pet": '{"kind":"dog"}',
             "Contact": '{"email":"a@b.co","name":"x"}',
             "Person": json.dumps({"id": str(uuid.UUID(int=1)), "name": "A", "born": "2000-01-31",
                                   "seen": "2024-02-29T12:00:00Z", "score": 0.5}, separators=(",", ":"))}[name]
    assert from_model.accepts(probe) and from_schema.accepts(probe)
    _model_accepts(source, probe)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_random_documents_validate_with_jsonschema_and_the_model(name: str, gpt2: gd.Vocabulary) -> None:
    source = SOURCES[name]
    schema = _schema(source)
    grammar = gd.compile_json_schema(source)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=400, seed=seed)
        assert result.stop_reason in ("eos", "complete"), result
        validate(schema, json.loads(result.data))
        if name not in MODEL_STRICTER:
            _model_accepts(source, result.text)


def test_constraints_of_the_model_are_enforced() -> None:
    grammar = gd.compile_json_schema(Order)
    assert not grammar.accepts('{"sku":"abc-1234","quantity":5,"status":"new"}')  # pattern
    assert not grammar.accepts('{"sku":"ABC-1234","quantity":0,"status":"new"}')  # gt=0
    assert not grammar.accepts('{"sku":"ABC-1234","quantity":5,"status":"lost"}')  # Literal
    assert not grammar.accepts('{"sku":"ABC-1234","quantity":5}')  # required
    pet = gd.compile_json_schema(TypeAdapter(Pet))
    assert pet.accepts('{"kind":"cat","lives":9}') and not pet.accepts('{"kind":"cat","lives":10}')
    assert not pet.accepts('{"kind":"cow"}')


def test_what_is_not_a_schema_source_is_refused() -> None:
    class NotAModel:
        pass

    with pytest.raises(gd.SchemaError, match="a schema must be an object or a boolean"):
        gd.compile_json_schema(NotAModel)  # type: ignore[arg-type]


def test_the_command_line_reads_module_colon_model(tmp_path) -> None:
    (tmp_path / "shop_models.py").write_text(
        "from typing import Literal\nfrom pydantic import BaseModel\n"
        "class Item(BaseModel):\n    kind: Literal['book']\n", encoding="utf-8")
    from grammar_decode.cli import load_schema
    sys.path.insert(0, str(tmp_path))
    try:
        schema = load_schema("shop_models:Item")
    finally:
        sys.path.remove(str(tmp_path))
    assert schema["properties"]["kind"]["const"] == "book"
    missing = subprocess.run([sys.executable, "-m", "grammar_decode", "generate", "--schema", "no_such_module:Item",
                              "--max-tokens", "5"], capture_output=True, text=True, cwd=tmp_path,
                             env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})
    assert missing.returncode == 2 and "cannot import 'no_such_module'" in missing.stderr
