"""Instances: a family's problem as plain data that round-trips through JSON exactly.

Every family's instance is a dataclass of JSON types (lists, dicts, str, int, float, bool, None;
no tuples), so ``Instance.from_json(inst.to_json()) == inst`` and a dataset file, an eval
record or ``reset(options={"instance": ...})`` carry it losslessly; ``instance_id`` is a hash of
the canonical JSON. Validation (``validate``) runs where an instance is read, once per object
(:meth:`Instance.coerce`), never for one a generator made.

What is read comes from outside (a file, a caller, a model), so reading is bounded and every
failure is a ``ValueError`` that says what is wrong: JSON text goes through
:func:`~solvergym.envs.records.parse_json` (length, depth, plain JSON), a dict or an unvalidated
dataclass through :func:`~solvergym.envs.records.check_value` (depth, finite numbers) before
``validate``, and a field of the wrong type that ``validate`` trips on (a ``TypeError``) is
reported as a ``ValueError`` too. Giving something that is not an instance at all (an int) to
:meth:`Instance.coerce` stays a ``TypeError``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .records import check_value, parse_json

__all__ = ["Instance", "canonical_json"]


def canonical_json(data: Any) -> str:
    """The canonical JSON of an instance's dict (``Instance.to_json``, ``instance_id``)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_asdict_or_fail)


def _asdict_or_fail(obj: Any) -> Any:
    # a dataclass nested in a field serialises as asdict would have made it
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


@dataclass
class Instance:
    """Base of every family's instance: a plain dataclass of JSON types that round-trips exactly.

    ``Instance.from_json(inst.to_json()) == inst`` holds because fields use lists, dicts, str,
    int, float, bool and None only (no tuples). ``instance_id`` is a hash of the canonical JSON.

    :meth:`mark_validated` remembers the canonical JSON an instance was found valid as (in a plain
    attribute, not a field, so ``to_dict``, ``to_json``, equality and ``instance_id`` ignore it);
    :meth:`coerce` skips :meth:`validate` while the instance still has that JSON.
    """

    @property
    def instance_id(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        # The same text as canonical_json(self.to_dict()), without asdict's deep copy: that copy
        # costs more than the DRUP check the validation mark saves, and every reset and every
        # mark check serialises the instance.
        return canonical_json({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """A validated instance of ``data``'s fields; ``ValueError`` saying what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a {cls.__name__} is a JSON object, got {type(data).__name__}")
        try:
            check_value(data)
        except ValueError as e:
            raise ValueError(f"{cls.__name__}: {e}") from None
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown, key=str)}")
        missing = {
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        }
        if missing:
            raise ValueError(f"{cls.__name__}: missing fields {sorted(missing)}")
        try:
            inst = cls(**data)
        except (TypeError, AttributeError, KeyError, IndexError) as e:  # a __post_init__ on a bad field
            raise ValueError(f"{cls.__name__}: a field has the wrong type ({type(e).__name__}: {e})") from None
        inst.checked_validate()
        return inst

    @classmethod
    def from_json(cls, text: str):
        """:meth:`from_dict` of JSON text, read with the bounds of :func:`~.records.parse_json`."""
        return cls.from_dict(parse_json(text, what=f"a {cls.__name__}'s JSON text"))

    @classmethod
    def coerce(cls, obj: Any):
        """The dataclass itself (validated unless it is unchanged since it last was), its ``dict``
        or its JSON text -> an instance."""
        if isinstance(obj, cls):
            # The followers of a GRPO group are reset with the leader's instance object; checking
            # it again (for SAT-Bench, re-running the DRUP proof) would be once per member for the
            # same answer. A mutated instance no longer matches its mark and is checked.
            try:
                marked = obj.is_validated()
            except RecursionError:  # mutated into something too deep to serialise
                marked = False
            if not marked:
                try:
                    check_value({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
                except ValueError as e:
                    raise ValueError(f"{cls.__name__}: {e}") from None
                obj.checked_validate()
            return obj
        if isinstance(obj, str):
            return cls.from_json(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        raise TypeError(f"a {cls.__name__} must be given as the dataclass, a dict or JSON text, "
                        f"got {type(obj).__name__}")

    def validate(self) -> None:
        """Raise ``ValueError`` when the instance is inconsistent (called by ``from_dict``)."""

    def checked_validate(self) -> None:
        """:meth:`validate`, then :meth:`mark_validated`; a field of a type ``validate`` did not
        expect (it compares a str with an int, indexes None...) or that is not JSON is a
        ``ValueError`` as well."""
        try:
            self.validate()
            self.mark_validated()  # serialises: a value that is not JSON (a set) fails here
        except (TypeError, AttributeError, KeyError, IndexError) as e:
            raise ValueError(f"{type(self).__name__}: a field has the wrong type ({type(e).__name__}: {e})") from None

    def mark_validated(self) -> None:
        """Record that the instance, as it is now, is valid: validated, or made by a generator."""
        self._validated_as = self.to_json()

    def is_validated(self) -> bool:
        """Whether the instance is unchanged since :meth:`mark_validated`."""
        return self.validated_json() is not None

    def validated_json(self) -> str | None:
        """The canonical JSON the instance was marked valid as, if it still is that; else None."""
        marked = getattr(self, "_validated_as", None)
        return marked if marked is not None and marked == self.to_json() else None
