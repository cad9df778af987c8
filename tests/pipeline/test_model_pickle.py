"""The models pickle as their class and slots (``Strict.__reduce__``): a forked child's
memo comes back pickled, and pydantic's own pickling (a state dict per model, set back by
a Python ``__setstate__``) cost a quarter more. A model comes back the same: equal, field
for field, with the same fields set, frozen, and validating as before."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import ValidationError

from promptops.pipeline.manifest import Manifest
from promptops.pipeline.model import PromptFile

DATA = {
    "description": "Greets",
    "arguments": [{"name": "who", "description": "Who", "required": True}],
    "messages": [{"role": "user", "text": "Hello {{ who }}"},
                 {"role": "assistant", "text": "Hi"}],
}


def test_a_model_comes_back_the_same() -> None:
    spec = PromptFile.model_validate(DATA)
    manifest = Manifest.model_validate({"name": "m", "version": "1.0.0"})
    for model in (spec, manifest):
        back = pickle.loads(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
        assert type(back) is type(model) and back == model
        assert back.__dict__ == model.__dict__
        assert back.model_fields_set == model.model_fields_set
        assert back.__pydantic_extra__ == model.__pydantic_extra__
        assert back.__pydantic_private__ == model.__pydantic_private__
        assert back.model_dump() == model.model_dump()
    back = pickle.loads(pickle.dumps(spec))
    assert [m.model_fields_set for m in back.messages] == [
        m.model_fields_set for m in spec.messages]
    with pytest.raises(ValidationError):  # still frozen
        back.description = "changed"  # type: ignore[misc]
    assert copy.deepcopy(back) == spec and back.model_copy(update={"description": "x"}
                                                           ).description == "x"


def test_a_model_pickles_without_a_state_dict() -> None:
    """No per-model dict of pydantic's four slot names: the class and the slots only."""
    data = pickle.dumps([PromptFile.model_validate(DATA)] * 2 + [
        PromptFile.model_validate({**DATA, "description": "Other"})])
    assert b"__pydantic_fields_set__" not in data and b"__pydantic_extra__" not in data
