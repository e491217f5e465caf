from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.process_selector import ProcessSelector
    from ..models.pty_size import PtySize


T = TypeVar("T", bound="ResizeProcessPtyRequest")


@_attrs_define
class ResizeProcessPtyRequest:
    """Request for ResizeProcessPty.

    Attributes:
        process (ProcessSelector | Unset): Selects one process of a sandbox by pid or by the tag it was started with.
        sandbox_id (str | Unset): The sandbox.
        size (PtySize | Unset): Size of a pseudo-terminal.
    """

    process: ProcessSelector | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    size: PtySize | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        process: dict[str, Any] | Unset = UNSET
        if not isinstance(self.process, Unset):
            process = self.process.to_dict()

        sandbox_id = self.sandbox_id

        size: dict[str, Any] | Unset = UNSET
        if not isinstance(self.size, Unset):
            size = self.size.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if process is not UNSET:
            field_dict["process"] = process
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if size is not UNSET:
            field_dict["size"] = size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.process_selector import ProcessSelector  # noqa: PLC0415
        from ..models.pty_size import PtySize  # noqa: PLC0415

        d = dict(src_dict)
        _process = d.pop("process", UNSET)
        process: ProcessSelector | Unset
        if isinstance(_process, Unset):
            process = UNSET
        else:
            process = ProcessSelector.from_dict(_process)

        sandbox_id = d.pop("sandboxId", UNSET)

        _size = d.pop("size", UNSET)
        size: PtySize | Unset
        if isinstance(_size, Unset):
            size = UNSET
        else:
            size = PtySize.from_dict(_size)

        resize_process_pty_request = cls(
            process=process,
            sandbox_id=sandbox_id,
            size=size,
        )

        resize_process_pty_request.additional_properties = d
        return resize_process_pty_request

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
