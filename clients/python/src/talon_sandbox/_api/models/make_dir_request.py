from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MakeDirRequest")


@_attrs_define
class MakeDirRequest:
    """Request for MakeDir.

    Attributes:
        mode (int | Unset): Permission bits; 0755 when 0.
        parents (bool | Unset): Create parents too, and succeed if it exists.
        path (str | Unset): The directory.
        sandbox_id (str | Unset): The sandbox.
        user (str | Unset): Act as this user (a name or uid in the sandbox): the call has that
             user's permissions, and what it creates is theirs. The agent's own
             (root) when empty.
    """

    mode: int | Unset = UNSET
    parents: bool | Unset = UNSET
    path: str | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    user: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        mode = self.mode

        parents = self.parents

        path = self.path

        sandbox_id = self.sandbox_id

        user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if mode is not UNSET:
            field_dict["mode"] = mode
        if parents is not UNSET:
            field_dict["parents"] = parents
        if path is not UNSET:
            field_dict["path"] = path
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mode = d.pop("mode", UNSET)

        parents = d.pop("parents", UNSET)

        path = d.pop("path", UNSET)

        sandbox_id = d.pop("sandboxId", UNSET)

        user = d.pop("user", UNSET)

        make_dir_request = cls(
            mode=mode,
            parents=parents,
            path=path,
            sandbox_id=sandbox_id,
            user=user,
        )

        make_dir_request.additional_properties = d
        return make_dir_request

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
