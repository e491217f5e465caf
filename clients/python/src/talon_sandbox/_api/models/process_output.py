from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.process_output_stream import ProcessOutputStream
from ..types import UNSET, Unset

T = TypeVar("T", bound="ProcessOutput")


@_attrs_define
class ProcessOutput:
    """A chunk of output. Sequence numbers count chunks per process from 1, over
    stdout and stderr together, so a reader can resume without loss or
    duplication.

       Attributes:
           data (str | Unset): The bytes, as written.
           seq (str | Unset): The chunk's sequence number.
           stream (ProcessOutputStream | Unset): Which stream.
    """

    data: str | Unset = UNSET
    seq: str | Unset = UNSET
    stream: ProcessOutputStream | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        seq = self.seq

        stream: str | Unset = UNSET
        if not isinstance(self.stream, Unset):
            stream = self.stream.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if seq is not UNSET:
            field_dict["seq"] = seq
        if stream is not UNSET:
            field_dict["stream"] = stream

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        data = d.pop("data", UNSET)

        seq = d.pop("seq", UNSET)

        _stream = d.pop("stream", UNSET)
        stream: ProcessOutputStream | Unset
        if isinstance(_stream, Unset):
            stream = UNSET
        else:
            stream = ProcessOutputStream(_stream)

        process_output = cls(
            data=data,
            seq=seq,
            stream=stream,
        )

        process_output.additional_properties = d
        return process_output

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
