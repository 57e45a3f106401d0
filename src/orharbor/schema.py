"""JSON Schema validation with errors that name the offending key."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema


def load_validator(package: str, name: str) -> jsonschema.Draft202012Validator:
    """The validator of a schema file shipped in ``package``."""
    return jsonschema.Draft202012Validator(json.loads(resources.files(package).joinpath(name).read_text()))


def first_error(validator: jsonschema.Draft202012Validator, data: object, whole: str) -> str | None:
    """``"key.path: message"`` of the first error (in key order), or None; ``whole`` names the root."""
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    error = errors[0]
    key = ".".join(str(p) for p in error.absolute_path)
    if not key and error.validator == "required" and error.message.startswith("'"):
        key = error.message.split("'")[1]
    return f"{key or whole}: {error.message}"
