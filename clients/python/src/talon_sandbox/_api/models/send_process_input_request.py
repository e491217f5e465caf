from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.process_selector import ProcessSelector


T = TypeVar("T", bound="SendProcessInputRequest")


@_attrs_define
class SendProcessInputRequest:
    """Request for SendProcessInput. In a stream, the first message names the
    sandbox and process; later ones may leave them empty.

       Attributes:
           data (str | Unset): Bytes to write.
           process (ProcessSelector | Unset): Selects one process of a sandbox by pid or by the tag it was started with.
           sandbox_id (str | Unset): The sandbox.
    """

    data: str | Unset = UNSET
    process: ProcessSelector | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        process: dict[str, Any] | Unset = UNSET
        if not isinstance(self.process, Unset):
            process = self.process.to_dict()

        sandbox_id = self.sandbox_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if process is not UNSET:
            field_dict["process"] = process
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_selector import ProcessSelector  # noqa: PLC0415

        d = dict(src_dict)
        data = d.pop("data", UNSET)

        _process = d.pop("process", UNSET)
        process: ProcessSelector | Unset
        if isinstance(_process, Unset):
            process = UNSET
        else:
            process = ProcessSelector.from_dict(_process)

        sandbox_id = d.pop("sandboxId", UNSET)

        send_process_input_request = cls(
            data=data,
            process=process,
            sandbox_id=sandbox_id,
        )

        send_process_input_request.additional_properties = d
        return send_process_input_request

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
