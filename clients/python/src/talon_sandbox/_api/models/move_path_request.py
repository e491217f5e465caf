from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MovePathRequest")


@_attrs_define
class MovePathRequest:
    """Request for MovePath.

    Attributes:
        destination_path (str | Unset): To.
        overwrite (bool | Unset): Replace an existing destination.
        sandbox_id (str | Unset): The sandbox.
        source_path (str | Unset): From.
        user (str | Unset): Act as this user (a name or uid in the sandbox): the call has that
             user's permissions, and what it creates is theirs. The agent's own
             (root) when empty.
    """

    destination_path: str | Unset = UNSET
    overwrite: bool | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    source_path: str | Unset = UNSET
    user: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        destination_path = self.destination_path

        overwrite = self.overwrite

        sandbox_id = self.sandbox_id

        source_path = self.source_path

        user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if destination_path is not UNSET:
            field_dict["destinationPath"] = destination_path
        if overwrite is not UNSET:
            field_dict["overwrite"] = overwrite
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if source_path is not UNSET:
            field_dict["sourcePath"] = source_path
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        destination_path = d.pop("destinationPath", UNSET)

        overwrite = d.pop("overwrite", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        source_path = d.pop("sourcePath", UNSET)

        user = d.pop("user", UNSET)

        move_path_request = cls(
            destination_path=destination_path,
            overwrite=overwrite,
            sandbox_id=sandbox_id,
            source_path=source_path,
            user=user,
        )

        move_path_request.additional_properties = d
        return move_path_request

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
