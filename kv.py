"""``KEY=VALUE`` command-line items: the one parser of the front ends (standard library only).

Two call sites, two readings of the value, one parser:

- env kwargs (``solvergym sample --kwargs``, ``train --env-kwargs``, ``check-trace --kwargs``,
  ``benchmarks/learning.py --env-kwargs``): ``parse_kv(items)``. A value is read as JSON when it
  parses (``k=7`` -> 7, ``show_mapping=true`` -> True, ``seeds=[1,2]`` -> a list) and kept as the
  string otherwise (``aggregation=any`` -> "any"); an item that starts with ``{`` is a JSON object
  whose keys are added as they are. Keys are taken verbatim.
- config overrides (``train --set``, ``sft --set``): ``parse_kv(items, fields=True)``. Keys are
  dataclass field names (surrounding spaces dropped, ``-`` read as ``_``: ``partial-kl=code`` sets
  ``partial_kl``) and values stay the strings typed: the caller converts each one with
  :func:`coerce_value` against the field's current value, which knows what JSON alone cannot
  (``lr=1`` is the float 1.0, ``lora_targets=["q_proj"]`` a tuple).
  :func:`solvergym.algorithms.config.make_config` coerces a string override and sets any other
  value as given, so parsing JSON here would skip those conversions.

Errors are :class:`ValueError` with the offending item: no ``=``, an empty key, a key given twice
(after the ``fields`` renaming, and across ``{...}`` objects), an ``{...}`` item that is not a
JSON object. Front ends turn them into their own messages.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

__all__ = ["parse_kv", "coerce_value"]


def parse_kv(items: Iterable[str] | None, *, fields: bool = False) -> dict[str, Any]:
    """``["k=7", "l=20"]`` -> ``{"k": 7, "l": 20}``; with ``fields=True`` -> ``{"k": "7", "l": "20"}``."""
    out: dict[str, Any] = {}

    def put(key: str, value: Any, item: str) -> None:
        if key in out:
            raise ValueError(f"repeated key {key!r} in {item!r}")
        out[key] = value

    for item in items or []:
        if not fields and item.lstrip().startswith("{"):
            try:
                obj = json.loads(item)
            except json.JSONDecodeError as e:
                raise ValueError(f"{item[:80]!r} is not a JSON object ({e})") from None
            except RecursionError:  # typed by hand or pasted from a record: never a traceback
                raise ValueError(f"{item[:80]!r}... is nested too deep to be a JSON object") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{item!r} is not a JSON object")
            for k, v in obj.items():
                put(k, v, item)
            continue
        key, sep, text = item.partition("=")
        if fields:
            key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"expected key=value, got {item!r}")
        value: Any = text
        if not fields:
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                pass  # kept as the string
            except RecursionError:
                raise ValueError(f"the value of {key!r} is nested too deep to read") from None
        put(key, value, item)
    return out


def coerce_value(value: str, current: Any) -> Any:
    """A command-line string -> the type of the field's current value (JSON when it parses).

    ``coerce_value("1", 0.5) == 1.0``, ``coerce_value('["q"]', ("q", "k")) == ("q",)``,
    ``coerce_value("code", None) == "code"``.
    """
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    except RecursionError:
        raise ValueError(f"{value[:80]!r}... is nested too deep to read") from None
    if isinstance(current, tuple) and isinstance(parsed, list):
        return tuple(parsed)
    if isinstance(current, float) and isinstance(parsed, int) and not isinstance(parsed, bool):
        return float(parsed)
    return parsed
