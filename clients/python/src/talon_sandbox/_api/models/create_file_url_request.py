from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.create_file_url_request_operation import CreateFileUrlRequestOperation
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateFileUrlRequest")


@_attrs_define
class CreateFileUrlRequest:
    """Request for CreateFileUrl.

    Attributes:
        operation (CreateFileUrlRequestOperation | Unset): Read or write; required.
        path (str | Unset): The file, as in ReadFile or WriteFile (relative paths are under
             /workspace).
        sandbox_id (str | Unset): The sandbox.
        ttl (str | Unset): Lifetime; 3600 s when unset, 86400 s at most.
    """

    operation: CreateFileUrlRequestOperation | Unset = UNSET
    path: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    ttl: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        operation: str | Unset = UNSET
        if not isinstance(self.operation, Unset):
            operation = self.operation.value

        path = self.path

        sandbox_id = self.sandbox_id

        ttl = self.ttl

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if operation is not UNSET:
            field_dict["operation"] = operation
        if path is not UNSET:
            field_dict["path"] = path
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if ttl is not UNSET:
            field_dict["ttl"] = ttl

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _operation = d.pop("operation", UNSET)
        operation: CreateFileUrlRequestOperation | Unset
        if isinstance(_operation, Unset):
            operation = UNSET
        else:
            operation = CreateFileUrlRequestOperation(_operation)

        path = d.pop("path", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        ttl = d.pop("ttl", UNSET)

        create_file_url_request = cls(
            operation=operation,
            path=path,
            sandbox_id=sandbox_id,
            ttl=ttl,
        )

        create_file_url_request.additional_properties = d
        return create_file_url_request

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
