from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.log_entry_stream import LogEntryStream
from ..types import UNSET, Unset

T = TypeVar("T", bound="LogEntry")


@_attrs_define
class LogEntry:
    """One kept chunk of output.

    Attributes:
        data (str | Unset): The bytes.
        seq (str | Unset): The chunk's sequence number.
        stream (LogEntryStream | Unset): Which stream.
        time (datetime.datetime | Unset): When the agent read it.
    """

    data: str | Unset = UNSET
    seq: str | Unset = UNSET
    stream: LogEntryStream | Unset = UNSET
    time: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        seq = self.seq

        stream: str | Unset = UNSET
        if not isinstance(self.stream, Unset):
            stream = self.stream.value

        time: str | Unset = UNSET
        if not isinstance(self.time, Unset):
            time = self.time.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if seq is not UNSET:
            field_dict["seq"] = seq
        if stream is not UNSET:
            field_dict["stream"] = stream
        if time is not UNSET:
            field_dict["time"] = time

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        data = d.pop("data", UNSET)

        seq = d.pop("seq", UNSET)

        _stream = d.pop("stream", UNSET)
        stream: LogEntryStream | Unset
        if isinstance(_stream, Unset):
            stream = UNSET
        else:
            stream = LogEntryStream(_stream)

        _time = d.pop("time", UNSET)
        time: datetime.datetime | Unset
        if isinstance(_time, Unset):
            time = UNSET
        else:
            time = datetime.datetime.fromisoformat(_time)

        log_entry = cls(
            data=data,
            seq=seq,
            stream=stream,
            time=time,
        )

        log_entry.additional_properties = d
        return log_entry

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
