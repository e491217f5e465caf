from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentCompleted")


@_attrs_define
class AgentCompleted:
    """The task ended.

    Attributes:
        duration (str | Unset): How long it ran.
        exit_code (int | Unset): The agent's exit code.
        timed_out (bool | Unset): Ended because the timeout passed.
    """

    duration: str | Unset = UNSET
    exit_code: int | Unset = UNSET
    timed_out: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        duration = self.duration

        exit_code = self.exit_code

        timed_out = self.timed_out

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if duration is not UNSET:
            field_dict["duration"] = duration
        if exit_code is not UNSET:
            field_dict["exitCode"] = exit_code
        if timed_out is not UNSET:
            field_dict["timedOut"] = timed_out

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        duration = d.pop("duration", UNSET)

        exit_code = d.pop("exitCode", UNSET)

        timed_out = d.pop("timedOut", UNSET)

        agent_completed = cls(
            duration=duration,
            exit_code=exit_code,
            timed_out=timed_out,
        )

        agent_completed.additional_properties = d
        return agent_completed

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
