from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ProcessExited")


@_attrs_define
class ProcessExited:
    """The process ended.

    Attributes:
        end_time (datetime.datetime | Unset): When it ended.
        exit_code (int | Unset): The exit code, or -1 when killed by a signal.
        signal (int | Unset): The signal that killed it, or 0.
        timed_out (bool | Unset): Killed because its timeout passed.
    """

    end_time: datetime.datetime | Unset = UNSET
    exit_code: int | Unset = UNSET
    signal: int | Unset = UNSET
    timed_out: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        end_time: str | Unset = UNSET
        if not isinstance(self.end_time, Unset):
            end_time = self.end_time.isoformat()

        exit_code = self.exit_code

        signal = self.signal

        timed_out = self.timed_out

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if end_time is not UNSET:
            field_dict["endTime"] = end_time
        if exit_code is not UNSET:
            field_dict["exitCode"] = exit_code
        if signal is not UNSET:
            field_dict["signal"] = signal
        if timed_out is not UNSET:
            field_dict["timedOut"] = timed_out

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _end_time = d.pop("endTime", UNSET)
        end_time: datetime.datetime | Unset
        if isinstance(_end_time, Unset):
            end_time = UNSET
        else:
            end_time = datetime.datetime.fromisoformat(_end_time)

        exit_code = d.pop("exitCode", UNSET)

        signal = d.pop("signal", UNSET)

        timed_out = d.pop("timedOut", UNSET)

        process_exited = cls(
            end_time=end_time,
            exit_code=exit_code,
            signal=signal,
            timed_out=timed_out,
        )

        process_exited.additional_properties = d
        return process_exited

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
