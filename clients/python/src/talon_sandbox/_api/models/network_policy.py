from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.network_policy_mode import NetworkPolicyMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="NetworkPolicy")


@_attrs_define
class NetworkPolicy:
    """What a sandbox may reach on the network.

    Attributes:
        allow_cidrs (list[str] | Unset): Allowed destination CIDRs (ALLOWLIST only).
        allow_domains (list[str] | Unset): Allowed destination domain names, resolved and pinned by the worker
             (ALLOWLIST only).
        mode (NetworkPolicyMode | Unset): The policy's mode.
    """

    allow_cidrs: list[str] | Unset = UNSET
    allow_domains: list[str] | Unset = UNSET
    mode: NetworkPolicyMode | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allow_cidrs: list[str] | Unset = UNSET
        if not isinstance(self.allow_cidrs, Unset):
            allow_cidrs = self.allow_cidrs

        allow_domains: list[str] | Unset = UNSET
        if not isinstance(self.allow_domains, Unset):
            allow_domains = self.allow_domains

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if allow_cidrs is not UNSET:
            field_dict["allowCidrs"] = allow_cidrs
        if allow_domains is not UNSET:
            field_dict["allowDomains"] = allow_domains
        if mode is not UNSET:
            field_dict["mode"] = mode

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow_cidrs = cast(list[str], d.pop("allowCidrs", UNSET))

        allow_domains = cast(list[str], d.pop("allowDomains", UNSET))

        _mode = d.pop("mode", UNSET)
        mode: NetworkPolicyMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = NetworkPolicyMode(_mode)

        network_policy = cls(
            allow_cidrs=allow_cidrs,
            allow_domains=allow_domains,
            mode=mode,
        )

        network_policy.additional_properties = d
        return network_policy

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
