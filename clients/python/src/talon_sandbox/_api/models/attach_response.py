from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.process_exited import ProcessExited


T = TypeVar("T", bound="AttachResponse")


@_attrs_define
class AttachResponse:
    """A message from the server.

    Attributes:
        exited (ProcessExited | Unset): The process ended.
        output (str | Unset): Terminal output.
        pid (int | Unset): The PTY process's pid; the first message.
    """

    exited: ProcessExited | Unset = UNSET
    output: str | Unset = UNSET
    pid: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        exited: dict[str, Any] | Unset = UNSET
        if not isinstance(self.exited, Unset):
            exited = self.exited.to_dict()

        output = self.output

        pid = self.pid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if exited is not UNSET:
            field_dict["exited"] = exited
        if output is not UNSET:
            field_dict["output"] = output
        if pid is not UNSET:
            field_dict["pid"] = pid

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_exited import ProcessExited  # noqa: PLC0415

        d = dict(src_dict)
        _exited = d.pop("exited", UNSET)
        exited: ProcessExited | Unset
        if isinstance(_exited, Unset):
            exited = UNSET
        else:
            exited = ProcessExited.from_dict(_exited)

        output = d.pop("output", UNSET)

        pid = d.pop("pid", UNSET)

        attach_response = cls(
            exited=exited,
            output=output,
            pid=pid,
        )

        attach_response.additional_properties = d
        return attach_response

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
