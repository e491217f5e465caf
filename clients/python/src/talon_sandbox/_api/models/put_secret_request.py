from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.put_secret_request_delivery import PutSecretRequestDelivery
from ..types import UNSET, Unset

T = TypeVar("T", bound="PutSecretRequest")


@_attrs_define
class PutSecretRequest:
    """Request for PutSecret.

    Attributes:
        delivery (PutSecretRequestDelivery | Unset): How it is delivered.
        expire_time (datetime.datetime | Unset): When it is deleted, and removed from the running sandboxes that name
             it (their secret files within 2 s); never when unset.
        name (str | Unset): The name.
        value (str | Unset): The value; at most 64 KiB.
    """

    delivery: PutSecretRequestDelivery | Unset = UNSET
    expire_time: datetime.datetime | Unset = UNSET
    name: str | Unset = UNSET
    value: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivery: str | Unset = UNSET
        if not isinstance(self.delivery, Unset):
            delivery = self.delivery.value

        expire_time: str | Unset = UNSET
        if not isinstance(self.expire_time, Unset):
            expire_time = self.expire_time.isoformat()

        name = self.name

        value = self.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if delivery is not UNSET:
            field_dict["delivery"] = delivery
        if expire_time is not UNSET:
            field_dict["expireTime"] = expire_time
        if name is not UNSET:
            field_dict["name"] = name
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _delivery = d.pop("delivery", UNSET)
        delivery: PutSecretRequestDelivery | Unset
        if isinstance(_delivery, Unset):
            delivery = UNSET
        else:
            delivery = PutSecretRequestDelivery(_delivery)

        _expire_time = d.pop("expireTime", UNSET)
        expire_time: datetime.datetime | Unset
        if isinstance(_expire_time, Unset):
            expire_time = UNSET
        else:
            expire_time = datetime.datetime.fromisoformat(_expire_time)

        name = d.pop("name", UNSET)

        value = d.pop("value", UNSET)

        put_secret_request = cls(
            delivery=delivery,
            expire_time=expire_time,
            name=name,
            value=value,
        )

        put_secret_request.additional_properties = d
        return put_secret_request

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
