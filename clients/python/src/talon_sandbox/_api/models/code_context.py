from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.code_context_language import CodeContextLanguage
from ..types import UNSET, Unset

T = TypeVar("T", bound="CodeContext")


@_attrs_define
class CodeContext:
    """A code context.

    Attributes:
        context_id (str | Unset): Its id.
        create_time (datetime.datetime | Unset): When it was created.
        cwd (str | Unset): Its kernel's working directory.
        execution_count (int | Unset): Runs so far (the kernel's execution count).
        language (CodeContextLanguage | Unset): Its language.
    """

    context_id: str | Unset = UNSET
    create_time: datetime.datetime | Unset = UNSET
    cwd: str | Unset = UNSET
    execution_count: int | Unset = UNSET
    language: CodeContextLanguage | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        context_id = self.context_id

        create_time: str | Unset = UNSET
        if not isinstance(self.create_time, Unset):
            create_time = self.create_time.isoformat()

        cwd = self.cwd

        execution_count = self.execution_count

        language: str | Unset = UNSET
        if not isinstance(self.language, Unset):
            language = self.language.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if context_id is not UNSET:
            field_dict["contextId"] = context_id
        if create_time is not UNSET:
            field_dict["createTime"] = create_time
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if execution_count is not UNSET:
            field_dict["executionCount"] = execution_count
        if language is not UNSET:
            field_dict["language"] = language

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        context_id = d.pop("contextId", UNSET)

        _create_time = d.pop("createTime", UNSET)
        create_time: datetime.datetime | Unset
        if isinstance(_create_time, Unset):
            create_time = UNSET
        else:
            create_time = datetime.datetime.fromisoformat(_create_time)

        cwd = d.pop("cwd", UNSET)

        execution_count = d.pop("executionCount", UNSET)

        _language = d.pop("language", UNSET)
        language: CodeContextLanguage | Unset
        if isinstance(_language, Unset):
            language = UNSET
        else:
            language = CodeContextLanguage(_language)

        code_context = cls(
            context_id=context_id,
            create_time=create_time,
            cwd=cwd,
            execution_count=execution_count,
            language=language,
        )

        code_context.additional_properties = d
        return code_context

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
