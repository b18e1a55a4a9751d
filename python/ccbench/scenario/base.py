"""The base of every scenario table: unknown keys are errors that list the accepted keys.

Assignment is validated as loading is (``scn.run.duration = "30s"``; a bare ``30`` is
refused and the message asks for a unit, never read as 30 ns): a bad value raises a
:class:`~ccbench.scenario.ScenarioError` naming the field by its path in the file
(``run.duration``, ``flows.voip.app.interval``), and the table keeps its old value.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_validator

from .errors import Problem, ScenarioError, fail, from_validation_error

__all__ = ["Table", "accepted_keys", "mark_paths"]


def accepted_keys(cls: type[BaseModel]) -> list[str]:
    """The keys a table accepts, as the user writes them (aliases where given)."""
    return [f.alias or name for name, f in cls.model_fields.items()]


class Table(BaseModel):
    """A TOML table. Keys not declared by the model are errors, never ignored."""

    model_config = ConfigDict(
        extra="forbid", strict=True, populate_by_name=True, frozen=False, validate_assignment=True
    )

    #: Human name of the table in messages ("queue", "flow", ...); defaults to the class name.
    table_name: ClassVar[str] = ""

    #: where this table sits in the scenario file ("run", "flows.voip.app"); set by
    #: Scenario after validation, so assignment errors name the user's path
    _where: str = PrivateAttr(default="")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            return super().__setattr__(name, value)
        prefix = f"{self._where}." if self._where else ""
        fields = type(self).model_fields
        if name not in fields and not any(f.alias == name for f in fields.values()):
            raise ScenarioError(
                [Problem(f"{prefix}{name}", f"is not an accepted key (accepted keys: {', '.join(accepted_keys(type(self)))})")]
            )
        before, was_set = self.__dict__.get(name), name in self.model_fields_set
        try:
            super().__setattr__(name, value)
        except ValidationError as e:
            # pydantic has already stored the value when a model-level check fails
            # (min_rto > max_rto): put the old one back, the table stays valid
            self.__dict__[name] = before
            if not was_set:
                self.model_fields_set.discard(name)
            err = from_validation_error(e, {name: value})
            raise ScenarioError(
                [Problem(f"{prefix}{p.path}" if p.path else prefix.rstrip("."), p.message) for p in err.problems]
            ) from None
        mark_paths(self, self._where)  # a table assigned whole (transport = {...}) learns its path

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


def mark_paths(model: Any, where: str) -> None:
    """Records in every table below ``model`` its path in the file (``flows.voip.app``);
    list items are named by their ``name`` where it is unique, by index otherwise."""
    if isinstance(model, Table):
        model._where = where
    if not isinstance(model, BaseModel):
        return
    prefix = f"{where}." if where else ""
    for key in type(model).model_fields:
        value = getattr(model, key, None)
        if isinstance(value, BaseModel):
            mark_paths(value, f"{prefix}{key}")
        elif isinstance(value, list):
            names = [getattr(v, "name", None) for v in value]
            for i, v in enumerate(value):
                n = names[i]
                label = f".{n}" if isinstance(n, str) and names.count(n) == 1 else f"[{i}]"
                mark_paths(v, f"{prefix}{key}{label}")


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
