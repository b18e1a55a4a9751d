"""The base of every scenario table: unknown keys are errors that list the accepted keys."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from .errors import fail

__all__ = ["Table", "accepted_keys"]


def accepted_keys(cls: type[BaseModel]) -> list[str]:
    """The keys a table accepts, as the user writes them (aliases where given)."""
    return [f.alias or name for name, f in cls.model_fields.items()]


class Table(BaseModel):
    """A TOML table. Keys not declared by the model are errors, never ignored."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=False)

    #: Human name of the table in messages ("queue", "flow", ...); defaults to the class name.
    table_name: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _check_keys(cls, data: Any) -> Any:
        if isinstance(data, BaseModel):
            return data
        if not isinstance(data, dict):
            raise fail(
                f"is not a table (accepted: a table with keys {', '.join(accepted_keys(cls))})", value=data
            )
        accepted = set(accepted_keys(cls)) | set(cls.model_fields)
        unknown = [k for k in data if k not in accepted]
        if unknown:
            raise fail(
                f"is not an accepted key (accepted keys: {', '.join(accepted_keys(cls))})",
                ats=[(k,) for k in unknown],
            )
        return data


def tagged(*models: type[BaseModel], key: str = "kind", default: str | None = None, shorthand: bool = False):
    """A union of tables told apart by ``key`` (``kind = "red"``), with one clear error
    when the key is missing or unknown.

    ``default``: the tag assumed when the key is absent. ``shorthand``: a bare string
    ``"none"`` stands for ``{key = "none"}``.
    """
    from typing import Annotated, Union

    from pydantic import BeforeValidator, Field

    tags: list[str] = []
    for m in models:
        ann = m.model_fields[key].annotation
        tags.extend(getattr(ann, "__args__", ()))
    shown = ", ".join(f'"{t}"' for t in tags)

    def check(data: Any) -> Any:
        if isinstance(data, BaseModel):
            return data
        if shorthand and isinstance(data, str):
            data = {key: data}
        if not isinstance(data, dict):
            raise fail(f"is not a table (accepted: a table with {key} = {shown})", value=data)
        if key not in data:
            if default is None:
                raise fail(f"is missing (accepted: {shown})", at=(key,))
            data = {key: default, **data}
        if data[key] not in tags:
            raise fail(f"is not a known {key} (accepted: {shown})", at=(key,), value=data[key])
        return data

    union = Union[models] if len(models) > 1 else models[0]  # type: ignore[valid-type]
    if len(models) > 1:
        return Annotated[union, Field(discriminator=key), BeforeValidator(check)]
    return Annotated[union, BeforeValidator(check)]
