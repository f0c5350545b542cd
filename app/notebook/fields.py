"""The API's keyword arguments: TraceConfig's fields, typed for tools, validated exactly as the HTTP body is.

`TraceFields` lists the fields with their types for mypy, pyright and editors (`**fields: Unpack[TraceFields]`;
`ModelFields` without depth for rx.sweep, `CompareFields` with lists for rx.compare, `TrainFields` for rx.train);
`keyword_signature` writes the same fields, with TraceConfig's own defaults, into each function's runtime signature,
so `help(rx.trace)`, `inspect.signature` and Jupyter's completion show them (`train_signature`: TrainRequest's
fields for rx.train, their defaults the preset's). tests/test_notebook_api.py checks both against TraceConfig
and TrainRequest, so a new field cannot be missing from either.

Values are validated in pydantic's strict mode, as POST /api/trace validates its JSON body (app/api/body.py):
`depth=True` and `depth="48"` are refused, not read as 1 and 48.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from typing_extensions import TypedDict

from ..config import Activation, Arch, Block, DType, Init, Norm, NormPosition, Residual, TraceConfig
from ..config.machine import Budget, check_budget, check_machine
from ..experiments.train import OptimizerName, TaskName, TrainRequest

F = TypeVar("F", bound=Callable[..., Any])
LANGS = ("en", "zh")
Language = Literal["en", "zh"]


class ModelFields(TypedDict, total=False):
    """TraceConfig's fields but depth (rx.sweep sets the depth), every one optional, its default TraceConfig's."""

    arch: Arch
    block: Block
    norm: Norm
    norm_groups: int
    norm_position: NormPosition
    final_norm: bool
    depth_scaled_norm: bool
    residual: Residual
    residual_scale: float
    activation: Activation
    init: Init
    dtype: DType
    d_model: int
    n_heads: int
    seq_len: int
    batch: int
    vocab_size: int
    seed: int


class TraceFields(ModelFields, total=False):
    """TraceConfig's fields (every one optional, its default TraceConfig's)."""

    depth: int


class CompareFields(TypedDict, total=False):
    """rx.compare's: each of TraceConfig's fields, or a list of values of it to vary."""

    arch: Arch | list[Arch]
    depth: int | list[int]
    block: Block | list[Block]
    norm: Norm | list[Norm]
    norm_groups: int | list[int]
    norm_position: NormPosition | list[NormPosition]
    final_norm: bool | list[bool]
    depth_scaled_norm: bool | list[bool]
    residual: Residual | list[Residual]
    residual_scale: float | list[float]
    activation: Activation | list[Activation]
    init: Init | list[Init]
    dtype: DType | list[DType]
    d_model: int | list[int]
    n_heads: int | list[int]
    seq_len: int | list[int]
    batch: int | list[int]
    vocab_size: int | list[int]
    seed: int | list[int]


class TrainFields(TypedDict, total=False):
    """TrainRequest's fields, the body of POST /api/train (each run: TraceConfig's fields, or a TraceConfig)."""

    runs: Sequence[TraceFields | TraceConfig]
    task: TaskName
    steps: int
    lr: float
    warmup_steps: int
    optimizer: OptimizerName
    clip: float | None
    seed: int


def keyword_signature(*, lists: bool = False, skip: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Give a `(..., **fields)` function a signature listing TraceConfig's fields as keyword-only parameters with
    their types and defaults (`lists`: each may also be a list, as rx.compare varies them)."""

    def decorate(fn: F) -> F:
        fields = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=info.default,
                annotation=info.annotation | list[info.annotation] if lists else info.annotation,  # type: ignore[name-defined]
            )
            for name, info in TraceConfig.model_fields.items()
            if name not in skip
        ]
        return _with_fields(fn, fields)

    return decorate


class _FromPreset:
    """The default rx.train's fields show in help(): the preset's value (TrainRequest's own with preset=None)."""

    def __repr__(self) -> str:
        return "<the preset's>"


FROM_PRESET = _FromPreset()


def train_signature(fn: F) -> F:
    """Give rx.train's `**fields` a signature listing TrainRequest's fields as keyword-only parameters with the
    types type checkers read (TrainFields), their default the preset's."""
    hints = typing.get_type_hints(TrainFields)
    fields = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=FROM_PRESET, annotation=hints[name])
        for name in TrainRequest.model_fields
    ]
    return _with_fields(fn, fields)


def _with_fields(fn: F, fields: list[inspect.Parameter]) -> F:
    """fn's own parameters (but **fields), their annotations resolved, then `fields`, as fn's runtime signature."""
    own = [
        p.replace(annotation=_resolved(p.annotation, fn))
        for p in inspect.signature(fn).parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]
    fn.__signature__ = inspect.signature(fn).replace(parameters=[*own, *fields])  # type: ignore[attr-defined]
    return fn


def _resolved(annotation: Any, fn: Callable[..., Any]) -> Any:
    """A parameter's annotation as its type (`from __future__ import annotations` leaves text), so help() shows
    Literal['en', 'zh'] rather than 'Language'."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, fn.__globals__)
    except NameError:  # a name imported only for type checkers
        return annotation


def refuse_unknown(fields: Mapping[str, Any], model: type[BaseModel], call: str, skip: tuple[str, ...] = ()) -> None:
    """A keyword that is not a field raises TypeError, as Python does for a function's unknown keyword, naming the
    nearest field."""
    known = [name for name in model.model_fields if name not in skip]
    for name in fields:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; the fields are {', '.join(known)}"
            raise TypeError(f"{call}() got an unexpected keyword argument {name!r}{hint}")


def check_lang(lang: object) -> None:
    if lang not in LANGS:
        raise ValueError(f"lang: one of {', '.join(LANGS)}; got {lang!r}")


def trace_config(fields: Mapping[str, Any], budget: Budget, call: str = "trace") -> TraceConfig:
    """TraceConfig from keyword arguments, validated as the HTTP body; the budget is this machine's memory by
    default ("server": the server's compute budget; None: no limit)."""
    refuse_unknown(fields, TraceConfig, call)
    check_budget(budget)
    cfg = TraceConfig.model_validate(dict(fields), strict=True, context={"budget": budget == "server"})
    check_machine(cfg, budget)
    return cfg
