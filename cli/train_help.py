"""The field reference that ends ``solvergym train --help``, generated from
:class:`~solvergym.algorithms.config.TrainConfig` and :data:`~solvergym.algorithms.presets.PRESET_TABLE`.

Every field, grouped as :data:`~solvergym.algorithms.config.GROUPS` orders them, with its default,
its ``metadata["help"]`` and, for each preset that sets it, the preset's value and source
(``--paper-scale`` marks the values of a preset's scale). Generated, not written: a field added to
the dataclass or a value changed in a preset shows up here with nothing else to edit.

Values are written as ``--set KEY=VALUE`` reads them (:func:`solvergym.kv.coerce_value`): a string
bare, anything else as JSON (``null``, ``true``, ``[0.9, 0.999]``).
"""
from __future__ import annotations

import dataclasses
import json
import shutil
import textwrap
from typing import Any

from ..algorithms.config import GROUPS, TRL_NAMES, TrainConfig
from ..algorithms.presets import ALIASES, PRESET_TABLE

__all__ = ["field_reference"]


def _show(value: Any) -> str:
    """``value`` as it is typed after ``--set KEY=``."""
    return value if isinstance(value, str) else json.dumps(value)


def _label(preset: str) -> str:
    aliases = [alias for alias, name in ALIASES.items() if name == preset]
    return f"{preset} ({', '.join(aliases)})" if aliases else preset


def _preset_settings() -> dict[str, list[tuple[str, Any, str]]]:
    """Field -> ``(label, value, source)`` for every preset that sets it, in :data:`PRESET_TABLE`
    order; a label is the preset's name with its aliases, ``--paper-scale`` added for its scale."""
    out: dict[str, list[tuple[str, Any, str]]] = {}
    for name, preset in PRESET_TABLE.items():
        for part, suffix in ((preset.fields, ""), (preset.scale, ", --paper-scale")):
            for key, (value, source) in part.items():
                out.setdefault(key, []).append((_label(name) + suffix, value, source))
    return out


def _default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def field_reference(width: int | None = None) -> str:
    """The reference text, wrapped to ``width`` columns (argparse's: the terminal's less 2)."""
    width = max(60, (width or shutil.get_terminal_size().columns - 2))
    # option names and values such as seq-mean-token-mean stay whole on one line
    body = textwrap.TextWrapper(width=width, initial_indent=" " * 6, subsequent_indent=" " * 6,
                                break_on_hyphens=False, break_long_words=False)
    cited = textwrap.TextWrapper(width=width, initial_indent=" " * 6, subsequent_indent=" " * 10,
                                 break_on_hyphens=False, break_long_words=False)
    settings = _preset_settings()
    lines = textwrap.wrap(
        "TrainConfig fields (algorithms/config.py). Set any of them with --set KEY=VALUE (a string bare, "
        "anything else as JSON: null for None, true, [0.9, 0.999]) or in a --config YAML/JSON file. Precedence: "
        "the --algo preset < its paper's scale (--paper-scale) < --config < the flags above < --set. "
        "Under each field: the presets that set it, with their values and sources (algorithms/presets.py). "
        "TRL's GRPOConfig names are accepted for the fields they name (algorithms/trl_names.py): "
        + ", ".join(f"{a}={f}" for a, f in TRL_NAMES.items()) + ".",
        width, break_on_hyphens=False)
    lines += ["", "presets:"]
    lines += [f"  {_label(name)}: {preset.paper}" for name, preset in PRESET_TABLE.items()]
    fields = dataclasses.fields(TrainConfig)
    for group, about in GROUPS.items():
        lines += ["", f"{group}: {about}"]
        for f in fields:
            if f.metadata["group"] != group:
                continue
            lines.append(f"  {f.name} = {_show(_default(f))}")
            lines += body.wrap(f.metadata["help"])
            for label, value, source in settings.get(f.name, []):
                lines += cited.wrap(f"{label}: {_show(value)} — {source}")
    return "\n".join(lines)
