from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditEvent")


@_attrs_define
class AuditEvent:
    """One audited call.

    Attributes:
        actor_id (str | Unset): The user, API key or worker that called.
        audit_event_id (str | Unset): Sequence number.
        event_time (datetime.datetime | Unset): When.
        method (str | Unset): The full gRPC method, e.g. "/talon.v1.SandboxService/CreateSandbox".
        outcome (str | Unset): The gRPC status code name, e.g. "OK", "PERMISSION_DENIED".
        request_id (str | Unset): The request id.
        resource_id (str | Unset): The object acted on, when known.
        tenant_id (str | Unset): The caller's tenant.
    """

    actor_id: str | Unset = UNSET
    audit_event_id: str | Unset = UNSET
    event_time: datetime.datetime | Unset = UNSET
    method: str | Unset = UNSET
    outcome: str | Unset = UNSET
    request_id: str | Unset = UNSET
    resource_id: str | Unset = UNSET
    tenant_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        actor_id = self.actor_id

        audit_event_id = self.audit_event_id

        event_time: str | Unset = UNSET
        if not isinstance(self.event_time, Unset):
            event_time = self.event_time.isoformat()

        method = self.method

        outcome = self.outcome

        request_id = self.request_id

        resource_id = self.resource_id

        tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if actor_id is not UNSET:
            field_dict["actorId"] = actor_id
        if audit_event_id is not UNSET:
            field_dict["auditEventId"] = audit_event_id
        if event_time is not UNSET:
            field_dict["eventTime"] = event_time
        if method is not UNSET:
            field_dict["method"] = method
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if request_id is not UNSET:
            field_dict["requestId"] = request_id
        if resource_id is not UNSET:
            field_dict["resourceId"] = resource_id
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        actor_id = d.pop("actorId", UNSET)

        audit_event_id = d.pop("auditEventId", UNSET)

        _event_time = d.pop("eventTime", UNSET)
        event_time: datetime.datetime | Unset
        if isinstance(_event_time, Unset):
            event_time = UNSET
        else:
            event_time = datetime.datetime.fromisoformat(_event_time)

        method = d.pop("method", UNSET)

        outcome = d.pop("outcome", UNSET)

        request_id = d.pop("requestId", UNSET)

        resource_id = d.pop("resourceId", UNSET)

        tenant_id = d.pop("tenantId", UNSET)

        audit_event = cls(
            actor_id=actor_id,
            audit_event_id=audit_event_id,
            event_time=event_time,
            method=method,
            outcome=outcome,
            request_id=request_id,
            resource_id=resource_id,
            tenant_id=tenant_id,
        )

        audit_event.additional_properties = d
        return audit_event

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
