"""Tool arguments made from the tables of filters (model.FILTERS) and of a search's
options (model.OPTIONS): ``table_arguments`` gives a tool one keyword argument per
filter it takes (None: not given), typed by the filter's shape, and, if it asks, one per
option, each described by its table; so a filter or an option added to a table is an
argument of every tool that takes them. The tool reads them with values.read_filters
and values.read_options."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from ..model import BOUND, FILTERS, FLAG, OPTIONS, TIME, VALUES, FilterSpec, OptionSpec

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


def _option(spec: OptionSpec) -> inspect.Parameter:
    about = spec.about[0].upper() + spec.about[1:]
    if spec.choices:
        choice: Any = Literal[spec.choices]  # type: ignore[valid-type]
        return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[choice | None, Field(description=about)])
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=False,
                             annotation=Annotated[bool, Field(description=about)])


def table_arguments(which: Callable[[FilterSpec], bool], *, options: bool = False) -> Callable[[F], F]:
    """The tool's ``**given`` becomes one keyword argument for each filter ``which``
    keeps (its ``name``), and for each option when ``options``, in the tool's signature
    that the MCP SDK reads."""
    def declare(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        kept = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        added = [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_annotation(s))
                 for s in FILTERS if which(s)]
        if options:
            added += [_option(s) for s in OPTIONS]
        fn.__signature__ = sig.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return fn
    return declare


def split_options(given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool's ``**given``: its filters, and its options."""
    names = {s.name for s in OPTIONS}
    return {k: v for k, v in given.items() if k not in names}, {k: v for k, v in given.items() if k in names}
