from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.create_code_context_request_language import (
    CreateCodeContextRequestLanguage,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_code_context_request_env import CreateCodeContextRequestEnv


T = TypeVar("T", bound="CreateCodeContextRequest")


@_attrs_define
class CreateCodeContextRequest:
    """Request for CreateCodeContext.

    Attributes:
        cwd (str | Unset): The working directory; /workspace when empty.
        env (CreateCodeContextRequestEnv | Unset): Environment variables of the kernel, over the sandbox's.
        language (CreateCodeContextRequestLanguage | Unset): The language.
        sandbox_id (str | Unset): The sandbox.
    """

    cwd: str | Unset = UNSET
    env: CreateCodeContextRequestEnv | Unset = UNSET
    language: CreateCodeContextRequestLanguage | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cwd = self.cwd

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        language: str | Unset = UNSET
        if not isinstance(self.language, Unset):
            language = self.language.value

        sandbox_id = self.sandbox_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if env is not UNSET:
            field_dict["env"] = env
        if language is not UNSET:
            field_dict["language"] = language
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_code_context_request_env import (
            CreateCodeContextRequestEnv,  # noqa: PLC0415
        )

        d = dict(src_dict)
        cwd = d.pop("cwd", UNSET)

        _env = d.pop("env", UNSET)
        env: CreateCodeContextRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = CreateCodeContextRequestEnv.from_dict(_env)

        _language = d.pop("language", UNSET)
        language: CreateCodeContextRequestLanguage | Unset
        if isinstance(_language, Unset):
            language = UNSET
        else:
            language = CreateCodeContextRequestLanguage(_language)

        sandbox_id = d.pop("sandboxId", UNSET)

        create_code_context_request = cls(
            cwd=cwd,
            env=env,
            language=language,
            sandbox_id=sandbox_id,
        )

        create_code_context_request.additional_properties = d
        return create_code_context_request

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
