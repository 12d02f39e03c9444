"""Tool arguments made from the filter table (model.FILTERS): ``filter_arguments`` gives a
tool one keyword argument per filter it takes (None: not given), typed by the filter's
shape and described by the table, so that a filter added to the table is an argument of
every tool that takes filters like it; the tool reads them with values.read_filters."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from ..model import BOUND, FILTERS, FLAG, TIME, VALUES, FilterSpec

F = TypeVar("F", bound=Callable[..., Any])


def _annotation(spec: FilterSpec) -> Any:
    about = Field(description=f"Only {spec.about}")
    if spec.shape == VALUES:
        item: Any = Literal[spec.choices] if spec.choices else str  # type: ignore[valid-type]
        return Annotated[list[item] | None, about]
    if spec.shape == BOUND:
        return Annotated[int | None, Field(ge=0, description=f"Only {spec.about}")]
    if spec.shape == TIME:
        return Annotated[str | None, about]
    assert spec.shape == FLAG
    return Annotated[bool | None, about]


def filter_arguments(which: Callable[[FilterSpec], bool]) -> Callable[[F], F]:
    """The tool's ``**filters`` become one keyword argument for each filter ``which``
    keeps (its ``name``), in the tool's signature that the MCP SDK reads."""
    def declare(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        kept = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        added = [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_annotation(s))
                 for s in FILTERS if which(s)]
        fn.__signature__ = sig.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return fn
    return declare
