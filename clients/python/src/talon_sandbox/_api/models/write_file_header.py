from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="WriteFileHeader")


@_attrs_define
class WriteFileHeader:
    """The header of a WriteFile stream.

    Attributes:
        create_parents (bool | Unset): Create missing parent directories.
        mode (int | Unset): Permission bits for a new file; 0644 when 0.
        no_overwrite (bool | Unset): Fail with ALREADY_EXISTS instead of replacing.
        path (str | Unset): The file.
        user (str | Unset): Act as this user (a name or uid in the sandbox): the call has that
             user's permissions, and what it creates is theirs. The agent's own
             (root) when empty.
    """

    create_parents: bool | Unset = UNSET
    mode: int | Unset = UNSET
    no_overwrite: bool | Unset = UNSET
    path: str | Unset = UNSET
    user: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        create_parents = self.create_parents

        mode = self.mode

        no_overwrite = self.no_overwrite

        path = self.path

        user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if create_parents is not UNSET:
            field_dict["createParents"] = create_parents
        if mode is not UNSET:
            field_dict["mode"] = mode
        if no_overwrite is not UNSET:
            field_dict["noOverwrite"] = no_overwrite
        if path is not UNSET:
            field_dict["path"] = path
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        create_parents = d.pop("createParents", UNSET)

        mode = d.pop("mode", UNSET)

        no_overwrite = d.pop("noOverwrite", UNSET)

        path = d.pop("path", UNSET)

        user = d.pop("user", UNSET)

        write_file_header = cls(
            create_parents=create_parents,
            mode=mode,
            no_overwrite=no_overwrite,
            path=path,
            user=user,
        )

        write_file_header.additional_properties = d
        return write_file_header

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
