from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...models.take_snapshot_request import TakeSnapshotRequest
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: TakeSnapshotRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/snapshots:take".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Status | str:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TakeSnapshotRequest,
) -> Response[Status | str]:
    """CreateSnapshot with its progress, for a client that shows it: the
     same checks, quota and reservation, answered before the copy starts
     (a refusal is the call's status); then a message each time the copy
     moves on, and the last one holds the snapshot. An error during the
     copy ends the stream with its status, and nothing is kept.

    Args:
        sandbox_id (str):
        body (TakeSnapshotRequest): Request for TakeSnapshot: CreateSnapshot's fields.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TakeSnapshotRequest,
) -> Status | str | None:
    """CreateSnapshot with its progress, for a client that shows it: the
     same checks, quota and reservation, answered before the copy starts
     (a refusal is the call's status); then a message each time the copy
     moves on, and the last one holds the snapshot. An error during the
     copy ends the stream with its status, and nothing is kept.

    Args:
        sandbox_id (str):
        body (TakeSnapshotRequest): Request for TakeSnapshot: CreateSnapshot's fields.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TakeSnapshotRequest,
) -> Response[Status | str]:
    """CreateSnapshot with its progress, for a client that shows it: the
     same checks, quota and reservation, answered before the copy starts
     (a refusal is the call's status); then a message each time the copy
     moves on, and the last one holds the snapshot. An error during the
     copy ends the stream with its status, and nothing is kept.

    Args:
        sandbox_id (str):
        body (TakeSnapshotRequest): Request for TakeSnapshot: CreateSnapshot's fields.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TakeSnapshotRequest,
) -> Status | str | None:
    """CreateSnapshot with its progress, for a client that shows it: the
     same checks, quota and reservation, answered before the copy starts
     (a refusal is the call's status); then a message each time the copy
     moves on, and the last one holds the snapshot. An error during the
     copy ends the stream with its status, and nothing is kept.

    Args:
        sandbox_id (str):
        body (TakeSnapshotRequest): Request for TakeSnapshot: CreateSnapshot's fields.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
