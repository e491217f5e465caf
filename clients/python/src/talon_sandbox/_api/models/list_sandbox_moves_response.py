from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sandbox_move import SandboxMove


T = TypeVar("T", bound="ListSandboxMovesResponse")


@_attrs_define
class ListSandboxMovesResponse:
    """Response of ListSandboxMoves.

    Attributes:
        moves (list[SandboxMove] | Unset): One page.
        next_page_token (str | Unset): Empty on the last page.
    """

    moves: list[SandboxMove] | Unset = UNSET
    next_page_token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        moves: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.moves, Unset):
            moves = []
            for moves_item_data in self.moves:
                moves_item = moves_item_data.to_dict()
                moves.append(moves_item)

        next_page_token = self.next_page_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if moves is not UNSET:
            field_dict["moves"] = moves
        if next_page_token is not UNSET:
            field_dict["nextPageToken"] = next_page_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sandbox_move import SandboxMove  # noqa: PLC0415

        d = dict(src_dict)
        _moves = d.pop("moves", UNSET)
        moves: list[SandboxMove] | Unset = UNSET
        if _moves is not UNSET:
            moves = []
            for moves_item_data in _moves:
                moves_item = SandboxMove.from_dict(moves_item_data)

                moves.append(moves_item)

        next_page_token = d.pop("nextPageToken", UNSET)

        list_sandbox_moves_response = cls(
            moves=moves,
            next_page_token=next_page_token,
        )

        list_sandbox_moves_response.additional_properties = d
        return list_sandbox_moves_response

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
