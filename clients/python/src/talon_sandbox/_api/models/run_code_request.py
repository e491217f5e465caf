from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_code_request_language import RunCodeRequestLanguage
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_code_request_env import RunCodeRequestEnv


T = TypeVar("T", bound="RunCodeRequest")


@_attrs_define
class RunCodeRequest:
    """Request for RunCode.

    Attributes:
        code (str | Unset): The code.
        context_id (str | Unset): The context; empty runs in the sandbox's default context of
             `language` (made on first use).
        env (RunCodeRequestEnv | Unset): Environment variables for this run only (names of letters, digits
             and `_`, not starting with a digit): set in the kernel before the
             code runs, and put back as they were after it (a name it did not
             have is removed again), so the context's state otherwise carries on.
        language (RunCodeRequestLanguage | Unset): The language, when no context is named (Python when unset).
        sandbox_id (str | Unset): The sandbox.
        timeout (str | Unset): How long it may run before it is interrupted; 5 minutes when unset.
    """

    code: str | Unset = UNSET
    context_id: str | Unset = UNSET
    env: RunCodeRequestEnv | Unset = UNSET
    language: RunCodeRequestLanguage | Unset = UNSET
    sandbox_id: str | Unset = UNSET
    timeout: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        context_id = self.context_id

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        language: str | Unset = UNSET
        if not isinstance(self.language, Unset):
            language = self.language.value

        sandbox_id = self.sandbox_id

        timeout = self.timeout

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if code is not UNSET:
            field_dict["code"] = code
        if context_id is not UNSET:
            field_dict["contextId"] = context_id
        if env is not UNSET:
            field_dict["env"] = env
        if language is not UNSET:
            field_dict["language"] = language
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if timeout is not UNSET:
            field_dict["timeout"] = timeout

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_code_request_env import RunCodeRequestEnv  # noqa: PLC0415

        d = dict(src_dict)
        code = d.pop("code", UNSET)

        context_id = d.pop("contextId", UNSET)

        _env = d.pop("env", UNSET)
        env: RunCodeRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = RunCodeRequestEnv.from_dict(_env)

        _language = d.pop("language", UNSET)
        language: RunCodeRequestLanguage | Unset
        if isinstance(_language, Unset):
            language = UNSET
        else:
            language = RunCodeRequestLanguage(_language)

        sandbox_id = d.pop("sandboxId", UNSET)

        timeout = d.pop("timeout", UNSET)

        run_code_request = cls(
            code=code,
            context_id=context_id,
            env=env,
            language=language,
            sandbox_id=sandbox_id,
            timeout=timeout,
        )

        run_code_request.additional_properties = d
        return run_code_request

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
