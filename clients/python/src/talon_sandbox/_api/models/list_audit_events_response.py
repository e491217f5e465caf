from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audit_event import AuditEvent


T = TypeVar("T", bound="ListAuditEventsResponse")


@_attrs_define
class ListAuditEventsResponse:
    """Response of ListAuditEvents.

    Attributes:
        audit_events (list[AuditEvent] | Unset): One page.
        next_page_token (str | Unset): Empty on the last page.
    """

    audit_events: list[AuditEvent] | Unset = UNSET
    next_page_token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        audit_events: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.audit_events, Unset):
            audit_events = []
            for audit_events_item_data in self.audit_events:
                audit_events_item = audit_events_item_data.to_dict()
                audit_events.append(audit_events_item)

        next_page_token = self.next_page_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if audit_events is not UNSET:
            field_dict["auditEvents"] = audit_events
        if next_page_token is not UNSET:
            field_dict["nextPageToken"] = next_page_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audit_event import AuditEvent  # noqa: PLC0415

        d = dict(src_dict)
        _audit_events = d.pop("auditEvents", UNSET)
        audit_events: list[AuditEvent] | Unset = UNSET
        if _audit_events is not UNSET:
            audit_events = []
            for audit_events_item_data in _audit_events:
                audit_events_item = AuditEvent.from_dict(audit_events_item_data)

                audit_events.append(audit_events_item)

        next_page_token = d.pop("nextPageToken", UNSET)

        list_audit_events_response = cls(
            audit_events=audit_events,
            next_page_token=next_page_token,
        )

        list_audit_events_response.additional_properties = d
        return list_audit_events_response

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
