from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreatePreviewTokenRequest")


@_attrs_define
class CreatePreviewTokenRequest:
    """Request for CreatePreviewToken.

    Attributes:
        port (int | Unset): The port inside the sandbox.
        sandbox_id (str | Unset): The sandbox.
        ttl (str | Unset): Lifetime; 3600 s when unset, 86400 s at most.
    """

    port: int | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    ttl: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        port = self.port

        sandbox_id = self.sandbox_id

        ttl = self.ttl

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if port is not UNSET:
            field_dict["port"] = port
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if ttl is not UNSET:
            field_dict["ttl"] = ttl

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        port = d.pop("port", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        ttl = d.pop("ttl", UNSET)

        create_preview_token_request = cls(
            port=port,
            sandbox_id=sandbox_id,
            ttl=ttl,
        )

        create_preview_token_request.additional_properties = d
        return create_preview_token_request

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
