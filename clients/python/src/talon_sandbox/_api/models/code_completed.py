from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CodeCompleted")


@_attrs_define
class CodeCompleted:
    """The end of a run.

    Attributes:
        duration (str | Unset): How long it ran.
        execution_count (int | Unset): The context's execution count after this run.
        interrupted (bool | Unset): Whether it was interrupted (by InterruptCodeContext or its timeout).
        timed_out (bool | Unset): Whether its timeout ended it.
    """

    duration: str | Unset = UNSET
    execution_count: int | Unset = UNSET
    interrupted: bool | Unset = UNSET
    timed_out: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        duration = self.duration

        execution_count = self.execution_count

        interrupted = self.interrupted

        timed_out = self.timed_out

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if duration is not UNSET:
            field_dict["duration"] = duration
        if execution_count is not UNSET:
            field_dict["executionCount"] = execution_count
        if interrupted is not UNSET:
            field_dict["interrupted"] = interrupted
        if timed_out is not UNSET:
            field_dict["timedOut"] = timed_out

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        duration = d.pop("duration", UNSET)

        execution_count = d.pop("executionCount", UNSET)

        interrupted = d.pop("interrupted", UNSET)

        timed_out = d.pop("timedOut", UNSET)

        code_completed = cls(
            duration=duration,
            execution_count=execution_count,
            interrupted=interrupted,
            timed_out=timed_out,
        )

        code_completed.additional_properties = d
        return code_completed

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
