from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.set_sandbox_timeout_request_timeout_action import (
    SetSandboxTimeoutRequestTimeoutAction,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="SetSandboxTimeoutRequest")


@_attrs_define
class SetSandboxTimeoutRequest:
    """Request for SetSandboxTimeout.

    Attributes:
        sandbox_id (str | Unset): The sandbox.
        timeout (str | Unset): How long from now.
        timeout_action (SetSandboxTimeoutRequestTimeoutAction | Unset): What happens then; unchanged when unset.
    """

    sandbox_id: str | Unset = UNSET
    timeout: str | Unset = UNSET
    timeout_action: SetSandboxTimeoutRequestTimeoutAction | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        sandbox_id = self.sandbox_id

        timeout = self.timeout

        timeout_action: str | Unset = UNSET
        if not isinstance(self.timeout_action, Unset):
            timeout_action = self.timeout_action.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if sandbox_id is not UNSET:
            field_dict["sandboxId"] = sandbox_id
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if timeout_action is not UNSET:
            field_dict["timeoutAction"] = timeout_action

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        sandbox_id = d.pop("sandboxId", UNSET)

        timeout = d.pop("timeout", UNSET)

        _timeout_action = d.pop("timeoutAction", UNSET)
        timeout_action: SetSandboxTimeoutRequestTimeoutAction | Unset
        if isinstance(_timeout_action, Unset):
            timeout_action = UNSET
        else:
            timeout_action = SetSandboxTimeoutRequestTimeoutAction(_timeout_action)

        set_sandbox_timeout_request = cls(
            sandbox_id=sandbox_id,
            timeout=timeout,
            timeout_action=timeout_action,
        )

        set_sandbox_timeout_request.additional_properties = d
        return set_sandbox_timeout_request

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
