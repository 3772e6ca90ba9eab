"""The public optimisation-modelling benchmarks as ``SolverOR-v0`` instances.

Format (or-modelling.md §1 and §1.1): NL4OPT, MAMO (EasyLP / ComplexLP), IndustryOR, OptMATH-Bench
and OptiBench are all released, by ORLM, SIRL and OptMATH, as records
``{"en_question": str, "en_answer": str | float | int, ...}``. SIRL's ``test_data/`` holds one
file per release: ``NL4OPT.jsonl``, ``MAMO_EasyLP.json``, ``MAMO_EasyLP_fixed.jsonl``,
``MAMO_ComplexLP.json``, ``MAMO_ComplexLP_fixed.jsonl``, ``IndustryOR_fixedV2.json``,
``OptMATH_Bench_166.jsonl``, ``OptMATH_Bench_193.jsonl`` and ``OptiBench.jsonl``. Every one of them
is JSON Lines, the three named ``.json`` included, while other copies (OptMATH's
``benchmark/*.json``) are one JSON array; :func:`load_benchmark` therefore decides by the content,
never by the extension. The fields besides the two ``en_`` ones vary by release and are all kept
in :attr:`ORInstance.extra`: MAMO's ``_fixed`` files add ``is_checked`` (0/1) and
``original_answer`` (one ComplexLP record spells it ``orginal_answer``), IndustryOR adds ``id``
and ``difficulty``, OptMATH's own copy adds ``id``.

Answers: a number (OptMATH's floats, OptiBench's ints) or a numeric string (``"1160.0"``,
``"-162"``). A string is read with its exponent (``"1e-05"`` is 1e-05: SIRL's ``extract_obj``
regex drops exponents, or-modelling.md §2, which would turn it into 1.0). A ground truth of
``0`` is a real answer. The infeasible markers are ``"No Best Solution"`` (any case, surrounding
spaces ignored; NL4OPT has 17) and ``-9999`` / ``-9999.0`` / ``-99999`` (SIRL's README names
``-99999``, its data uses ``-9999`` and ``-9999.0``), as a string or a number: the instance's
answer is then ``None`` and its status ``"infeasible"``, which a program matches by a model the
solver reports infeasible. Only these exact markers count: SIRL's evaluator tests whether the
answer *contains* ``"-9999"`` (or-modelling.md §3), which would also take ``-99990``. Anything
else (empty, ``"nan"``, ``"inf"``, ``"1,160"``, text) makes the record bad.

Hostile input: one validation path serves the loader and ``SolverOR-v0``'s
``reset(options={"instance": ...})`` (which calls :func:`as_benchmark_record` and
:func:`record_to_instance`, :meth:`ORProblem.coerce`). Files are read by
:mod:`solvergym.envs.records`: a regular file only (symlinks followed; ``/dev/zero``, a FIFO or a
directory is refused before a byte is read) of at most :data:`MAX_FILE_BYTES`, else a
``ValueError`` naming the path. A bad record (not JSON, nested deeper than
:data:`~solvergym.envs.records.MAX_DEPTH` levels, not an object, no or an empty question, a
question over :data:`MAX_QUESTION_CHARS` characters or holding control characters, a missing or
unreadable answer, fields that do not round-trip as JSON; for an :class:`ORInstance` dict, the
same question rules and a model within :data:`MAX_MODEL_VARIABLES`,
:data:`MAX_MODEL_CONSTRAINTS` and :data:`MAX_MODEL_NONZEROS`) is reported with its line number
and the reason and skipped, never raised from :func:`load_benchmark`; a record over
:data:`MAX_LINE_CHARS` is reported without being parsed. At reset the same checks raise a
``ValueError`` saying what is wrong. The model bounds are checked on the record's lists before a
model is built, so a record costs work linear in its size whatever it holds (the feature
analysis of one row over 12,000 binaries took 20 s).

A benchmark record has no reference model (its ground truth is the benchmark's, not a
re-solve's): ``family="benchmark"``, ``sense=""`` (unknown), ``model={}``, ``data={}``,
``features={}``, ``source`` the release name. ``SolverOR-v0`` scores such an instance as any
other (the answer program's objective against ``answer``), but has no oracle for it
(``gold``/``sample_answer`` raise ``ValueError``). The answers themselves are the benchmarks' and
are often wrong (or-modelling.md §4: at least 8-54 % per set).

:func:`convert_benchmark` writes a file's instances as JSON Lines of :class:`ORInstance` dicts
(the ``solvergym dataset or-convert`` command); :func:`load_benchmark` reads those back as well.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Iterator

from ..datafiles import write_lines
from ..records import MAX_FILE_BYTES, check_value, parse_json, read_jsonl, read_regular
from ..text import validate_action
from .generator import ORInstance

__all__ = [
    "BENCHMARK_FAMILY",
    "MAX_QUESTION_CHARS",
    "MAX_LINE_CHARS",
    "MAX_FILE_BYTES",
    "MAX_MODEL_VARIABLES",
    "MAX_MODEL_CONSTRAINTS",
    "MAX_MODEL_NONZEROS",
    "MAX_REPORTED_BAD",
    "INFEASIBLE_MARKERS",
    "parse_answer",
    "is_benchmark_record",
    "as_benchmark_record",
    "record_to_instance",
    "check_model_size",
    "check_instance_record",
    "iter_records",
    "load_benchmark",
    "write_instances",
    "convert_benchmark",
]

#: the family of every instance read from a benchmark record
BENCHMARK_FAMILY = "benchmark"
#: the longest question accepted (the longest public one, an IndustryOR or ComplexLP table, is a
#: few thousand characters; this bound only stops a hostile record from becoming a huge prompt)
MAX_QUESTION_CHARS = 100_000
#: a JSON Lines line longer than this is reported bad without being parsed (a question at the
#: bound plus generous room for the other fields)
MAX_LINE_CHARS = 1_000_000
# MAX_FILE_BYTES (solvergym.envs.records): a file larger than this is refused before it is read;
# the largest release is a few MB
#: the most variables an :class:`ORInstance` record's model may have (the generator's largest,
#: ``assignment`` at size 40, has 1,600; gurobipy's size-limited licence allows 2,000; a public
#: benchmark record has no model at all)
MAX_MODEL_VARIABLES = 5_000
#: the most constraints (the generator's largest: 139, ``bin_packing`` at size 17)
MAX_MODEL_CONSTRAINTS = 5_000
#: the most nonzeros: constraint coefficients, objective and quadratic terms together (the
#: generator's largest: 4,805, ``assignment`` at size 40)
MAX_MODEL_NONZEROS = 50_000
#: the report lists at most this many bad records (``n_bad`` counts them all)
MAX_REPORTED_BAD = 1000
#: the numeric infeasible markers (SIRL's data: -9999, -9999.0; its README: -99999)
INFEASIBLE_MARKERS = (-9999.0, -99999.0)

_NO_BEST = "no best solution"
# A decimal number with an optional exponent: what float() reads, minus "inf", "nan",
# "infinity", underscores ("1_000") and the like, which float() also accepts.
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_STRING_MARKERS = re.compile(r"-9999(?:9)?(?:\.0*)?")
_RESERVED = ("source_index",)
_INSTANCE_FIELDS = ("family", "question", "answer", "status")


def parse_answer(value: Any) -> float | None:
    """A benchmark ``en_answer`` -> the optimal objective (``None``: the problem is infeasible).

    Numbers and numeric strings (with an exponent: ``"1e-05"`` -> 1e-05) give a float; the
    infeasible markers (see the module docstring) give ``None``; anything else raises
    ``ValueError`` saying why."""
    if isinstance(value, bool):  # a JSON true/false is no objective value (bool is an int subclass)
        raise ValueError(f"en_answer must be a number or a numeric string, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float range
            raise ValueError("en_answer is too large to be an objective value") from None
        if not math.isfinite(number):
            raise ValueError(f"en_answer must be finite, got {value!r}")
        return None if number in INFEASIBLE_MARKERS else number
    if not isinstance(value, str):
        raise ValueError(f"en_answer must be a number or a numeric string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise ValueError("en_answer is empty")
    if text.lower() == _NO_BEST or _STRING_MARKERS.fullmatch(text):
        return None
    if len(text) > 64 or not _NUMBER_RE.fullmatch(text):  # 64: no real objective is written longer
        raise ValueError(f"en_answer is not a number nor an infeasible marker: {value[:80]!r}")
    number = float(text)
    if not math.isfinite(number):  # "1e999"
        raise ValueError(f"en_answer must be finite, got {value[:80]!r}")
    return number


def is_benchmark_record(obj: Any) -> bool:
    """Whether ``obj`` is a benchmark record (a dict with ``en_question``), not an ORInstance dict."""
    return isinstance(obj, dict) and "en_question" in obj


def as_benchmark_record(obj: Any) -> dict | None:
    """``obj`` as a benchmark record dict if it is one (a dict with ``en_question``, or the JSON text
    of one), else ``None`` (an :class:`ORInstance`, its dict or its JSON text; or something else,
    left for :meth:`ORInstance.coerce` to accept or refuse).

    It is the first step of ``SolverOR-v0``'s ``reset(options={"instance": ...})``, so it also
    applies the loader's checks to what is not a record: an :class:`ORInstance` dict, its JSON
    text or a dataclass whose question or model a loaded record could not have
    (:func:`check_instance_record`), or a dict nested too deeply, is a ``ValueError`` here. Text
    that is not JSON gives ``None``: :meth:`ORInstance.coerce` reads it with the same bounds and
    says why it is not an instance."""
    if isinstance(obj, str):
        try:
            obj = parse_json(obj, what="the instance's JSON text")
        except ValueError:
            return None
    if isinstance(obj, dict):
        check_value(obj)
        if is_benchmark_record(obj):
            return obj
        check_instance_record(obj)
    elif isinstance(obj, ORInstance):
        # every time, marked or not: cheaper than the serialisation that tells a mark is current
        check_instance_record(obj)
    return None


def _question_error(question: Any, what: str) -> str | None:
    """Why ``question`` is no question a policy may be shown (``None``: it is one)."""
    if not isinstance(question, str):
        return f"{what} must be a string, got {type(question).__name__}"
    _, error = validate_action(question, MAX_QUESTION_CHARS)  # length and control characters
    if error is not None:
        return error.replace("action", what, 1)
    if not question.strip():
        return f"{what} is empty"
    return None


def check_model_size(model: Any) -> None:
    """``ValueError`` when a model dict (:meth:`LinearModel.to_dict`'s shape) has more than
    :data:`MAX_MODEL_VARIABLES` variables, :data:`MAX_MODEL_CONSTRAINTS` constraints or
    :data:`MAX_MODEL_NONZEROS` nonzeros. Only lengths are read (a shape it does not expect is
    left to :meth:`LinearModel.from_dict` to refuse), so the check costs one pass over the rows."""
    if not isinstance(model, dict):
        return
    variables, constraints = model.get("variables"), model.get("constraints")
    if isinstance(variables, list) and len(variables) > MAX_MODEL_VARIABLES:
        raise ValueError(f"the model has {len(variables)} variables; the limit is {MAX_MODEL_VARIABLES}")
    if not isinstance(constraints, list):
        return
    if len(constraints) > MAX_MODEL_CONSTRAINTS:
        raise ValueError(f"the model has {len(constraints)} constraints; the limit is {MAX_MODEL_CONSTRAINTS}")
    nonzeros = 0
    for part in (model.get("objective"), model.get("quadratic")):
        nonzeros += len(part) if isinstance(part, (dict, list)) else 0
    for row in constraints:
        coefs = row.get("coefs") if isinstance(row, dict) else None
        nonzeros += len(coefs) if isinstance(coefs, dict) else 0
    if nonzeros > MAX_MODEL_NONZEROS:
        raise ValueError(f"the model has {nonzeros} nonzeros; the limit is {MAX_MODEL_NONZEROS}")


def check_instance_record(obj: dict | ORInstance) -> None:
    """The checks an :class:`ORInstance` read from outside (a converted file's line, a reset's
    dict, JSON or dataclass) passes besides :meth:`ORInstance.validate`: its question obeys a
    benchmark record's rules (:data:`MAX_QUESTION_CHARS`, no control characters) and its model
    :func:`check_model_size`; ``ValueError`` saying which fails."""
    get = obj.get if isinstance(obj, dict) else lambda name: getattr(obj, name, None)
    question = get("question")
    # a missing or non-text question is left to from_dict / validate, which say so
    error = _question_error(question, "question") if isinstance(question, str) else None
    if error is not None:
        raise ValueError(error)
    check_model_size(get("model"))


def _json_roundtrips(value: Any) -> bool:
    """Whether ``value`` is made of JSON types that come back equal (no NaN, tuple, int key...)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False)) == value
    except (TypeError, ValueError, RecursionError):
        return False


def record_to_instance(record: dict, *, source: str = "benchmark", index: int | None = None) -> ORInstance:
    """One benchmark record -> a validated :class:`ORInstance` (``ValueError`` saying why not).

    ``question`` is ``en_question`` (at most :data:`MAX_QUESTION_CHARS` characters, no control
    characters other than whitespace); ``answer``/``status`` come from :func:`parse_answer`;
    ``family="benchmark"``, ``sense=""`` (unknown), ``model``, ``data`` and ``features`` empty (no
    reference model); ``source`` the release name (not ``"generated"``, which is the generator's);
    ``extra`` every other field of the record, as it is, plus ``source_index`` (``index``, the
    record's 0-based position in its file) when given, so that two identical records of one file
    remain two instances."""
    if not isinstance(record, dict):
        raise ValueError(f"a benchmark record is a JSON object, got {type(record).__name__}")
    if not isinstance(source, str) or not source or source == "generated":
        raise ValueError(f"source must be a release name other than 'generated', got {source!r}")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise ValueError(f"index must be an int >= 0 or None, got {index!r}")
    check_value(record)  # nesting and NaN first: the rest may serialise the record
    if "en_question" not in record:
        raise ValueError("the record has no en_question")
    if "en_answer" not in record:
        raise ValueError("the record has no en_answer")
    question = record["en_question"]
    error = _question_error(question, "en_question")
    if error is not None:
        raise ValueError(error)
    answer = parse_answer(record["en_answer"])
    extra = {k: v for k, v in record.items() if k not in ("en_question", "en_answer")}
    if any(not isinstance(k, str) for k in extra):
        raise ValueError("the record's field names must be strings")
    clash = [k for k in _RESERVED if k in extra]
    if clash and index is not None:
        raise ValueError(f"the record has the field {clash[0]!r}, which the loader writes itself")
    if not _json_roundtrips(extra):
        raise ValueError("the record's other fields are not plain JSON (NaN, infinity or non-JSON types)")
    if index is not None:
        extra["source_index"] = index
    inst = ORInstance(family=BENCHMARK_FAMILY, question=question, answer=answer,
                      status="infeasible" if answer is None else "optimal", sense="", model={}, data={},
                      features={}, source=source, extra=extra)
    inst.validate()
    inst.mark_validated()
    return inst


def _to_instance(obj: Any, source: str, index: int) -> ORInstance:
    """A benchmark record, or an :class:`ORInstance` dict (a file :func:`convert_benchmark` wrote)."""
    if isinstance(obj, dict) and "en_question" not in obj and all(k in obj for k in _INSTANCE_FIELDS):
        check_instance_record(obj)  # before from_dict builds and analyses the model
        return ORInstance.from_dict(obj)
    return record_to_instance(obj, source=source, index=index)


def _array_items(text: str) -> Iterator[tuple[int, Any, int]]:
    """``(line, item, characters)`` of a whole-file JSON array; ``ValueError`` if the text is not one."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    pos = ws.match(text, 0).end()
    if text[pos:pos + 1] != "[":
        raise ValueError("not a JSON array")
    pos = ws.match(text, pos + 1).end()
    line, counted = 1, 0
    if text[pos:pos + 1] == "]":
        end = ws.match(text, pos + 1).end()
        if end != len(text):
            raise ValueError("text after the array")
        return
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        item, end = decoder.raw_decode(text, pos)
        yield line, item, end - pos
        pos = ws.match(text, end).end()
        ch = text[pos:pos + 1]
        if ch == "]":
            if ws.match(text, pos + 1).end() != len(text):
                raise ValueError("text after the array")
            return
        if ch != ",":
            raise ValueError(f"expected ',' or ']' at character {pos}")
        pos = ws.match(text, pos + 1).end()


def _item_error(item: Any, chars: int) -> str | None:
    """Why one item of a JSON array is refused before it is read as a record (as a JSON Lines line)."""
    if chars > MAX_LINE_CHARS:
        return f"the record is {chars} characters; the limit is {MAX_LINE_CHARS}"
    try:
        check_value(item)
    except ValueError as e:
        return str(e)
    return None


def iter_records(text: str) -> tuple[str, list[tuple[int, Any, str | None]]]:
    """Split a file's text into records: ``(format, [(line, record, error)])``.

    ``format`` is ``"json-array"`` when the whole text is one JSON array (each item's line is the
    line it starts on), else ``"jsonl"`` (one record per non-blank line). ``error`` is set, and
    ``record`` None, for a record that is not JSON, longer than :data:`MAX_LINE_CHARS`, nested
    too deeply or not plain JSON (:mod:`solvergym.envs.records`). A text that starts as an array
    but is broken is read as JSON Lines, so that its lines are reported rather than the file
    refused."""
    if text.lstrip().startswith("["):
        try:
            # a list, not a generator: an error half-way must not leave half the items read
            items = list(_array_items(text))
        except (ValueError, RecursionError):
            pass
        else:
            out = []
            for line, item, chars in items:
                error = _item_error(item, chars)
                out.append((line, None if error else item, error))
            return "json-array", out
    return "jsonl", read_jsonl(None, text=text, max_line_chars=MAX_LINE_CHARS)


def _read(path: Path) -> tuple[bytes, str]:
    """The bytes and text of a benchmark file (regular, bounded, UTF-8; ``ValueError`` if not)."""
    data = read_regular(path, MAX_FILE_BYTES)
    try:
        return data, data.decode("utf-8-sig")  # -sig: a BOM some editors write is not a record
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def load_benchmark(path: str | os.PathLike, *, source: str | None = None) -> tuple[list[ORInstance], dict[str, Any]]:
    """Read a benchmark file (JSON Lines or one JSON array, by content) -> ``(instances, report)``.

    ``source`` (default: the file's stem, e.g. ``"MAMO_ComplexLP_fixed"``) names the release in
    every instance. The report: ``path``, ``source``, ``format`` (``"jsonl"`` or
    ``"json-array"``), ``n_read`` (records read, bad ones included; blank lines are not records),
    ``n_ok``, ``n_bad``, ``n_infeasible`` (of the good ones), ``bad`` (``{"line", "reason"}`` for
    the first :data:`MAX_REPORTED_BAD` bad records; line numbers count from 1). A bad record never
    raises; a missing file (``OSError``), one that is not a regular file, one over
    :data:`MAX_FILE_BYTES` or one that is not UTF-8 text (``ValueError``) does."""
    return _load(Path(path), source, _read(Path(path))[1])


def _load(path: Path, source: str | None, text: str) -> tuple[list[ORInstance], dict[str, Any]]:
    source = path.stem if source is None else source
    fmt, items = iter_records(text)
    instances: list[ORInstance] = []
    bad: list[dict[str, Any]] = []
    n_bad = 0
    for position, (line, obj, error) in enumerate(items):
        if error is None:
            try:
                instances.append(_to_instance(obj, source, position))
                continue
            except ValueError as e:
                error = str(e)
        n_bad += 1
        if len(bad) < MAX_REPORTED_BAD:
            bad.append({"line": line, "reason": error})
    report = {"path": str(path), "source": source, "format": fmt, "n_read": len(items), "n_ok": len(instances),
              "n_bad": n_bad, "n_infeasible": sum(i.status == "infeasible" for i in instances), "bad": bad}
    return instances, report


def write_instances(path: str | os.PathLike, instances: list[ORInstance]) -> str:
    """Write instances one per line, each its canonical JSON (:meth:`Instance.to_json`: sorted keys,
    so a line's sha256 prefix is the instance's ``instance_id``), ``\\n`` endings; return the file's
    sha256."""
    return write_lines(path, (inst.to_json() for inst in instances))


def convert_benchmark(input_path: str | os.PathLike, out_dir: str | os.PathLike, *,
                      source: str | None = None) -> dict[str, Any]:
    """Load a local benchmark file (:func:`load_benchmark`) and write ``out_dir/<stem>.jsonl`` (one
    :class:`ORInstance` per line, :func:`write_instances`) and ``out_dir/manifest.json``; return the
    manifest: the input's name and sha256, the counts, the output's sha256 and the bad-record
    report. Nothing is downloaded."""
    input_path = Path(input_path)
    data, text = _read(input_path)  # read once: the hash is of the bytes that were converted
    instances, report = _load(input_path, source, text)
    out_dir = Path(out_dir)
    name = f"{input_path.stem}.jsonl"
    files = {name: {"count": len(instances), "infeasible": report["n_infeasible"],
                    "sha256": write_instances(out_dir / name, instances)}}
    manifest = {"name": "or-convert", "input": input_path.name,
                "input_sha256": hashlib.sha256(data).hexdigest(),
                "source": report["source"], "format": report["format"],
                "counts": {k: report[k] for k in ("n_read", "n_ok", "n_bad", "n_infeasible")},
                "bad": report["bad"], "files": files}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest
