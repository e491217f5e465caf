from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.create_snapshot_request import CreateSnapshotRequest
from ...models.create_snapshot_response import CreateSnapshotResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: CreateSnapshotRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/snapshots".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreateSnapshotResponse | Status:
    if response.status_code == 200:
        response_200 = CreateSnapshotResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreateSnapshotResponse | Status]:
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
    body: CreateSnapshotRequest,
) -> Response[CreateSnapshotResponse | Status]:
    """Snapshots a running or paused sandbox's filesystem (its root's
     writable layer and its workspace, home and other writable
     directories) as a snapshot of the caller's tenant. A running sandbox
     is frozen for the copy only, then runs on. Processes, memory and open
     connections are not kept (`memory` is refused: see the docs).
     Counted against the tenant's snapshot storage quota.

    Args:
        sandbox_id (str):
        body (CreateSnapshotRequest): Request for CreateSnapshot.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSnapshotResponse | Status]
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
    body: CreateSnapshotRequest,
) -> CreateSnapshotResponse | Status | None:
    """Snapshots a running or paused sandbox's filesystem (its root's
     writable layer and its workspace, home and other writable
     directories) as a snapshot of the caller's tenant. A running sandbox
     is frozen for the copy only, then runs on. Processes, memory and open
     connections are not kept (`memory` is refused: see the docs).
     Counted against the tenant's snapshot storage quota.

    Args:
        sandbox_id (str):
        body (CreateSnapshotRequest): Request for CreateSnapshot.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSnapshotResponse | Status
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
    body: CreateSnapshotRequest,
) -> Response[CreateSnapshotResponse | Status]:
    """Snapshots a running or paused sandbox's filesystem (its root's
     writable layer and its workspace, home and other writable
     directories) as a snapshot of the caller's tenant. A running sandbox
     is frozen for the copy only, then runs on. Processes, memory and open
     connections are not kept (`memory` is refused: see the docs).
     Counted against the tenant's snapshot storage quota.

    Args:
        sandbox_id (str):
        body (CreateSnapshotRequest): Request for CreateSnapshot.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSnapshotResponse | Status]
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
    body: CreateSnapshotRequest,
) -> CreateSnapshotResponse | Status | None:
    """Snapshots a running or paused sandbox's filesystem (its root's
     writable layer and its workspace, home and other writable
     directories) as a snapshot of the caller's tenant. A running sandbox
     is frozen for the copy only, then runs on. Processes, memory and open
     connections are not kept (`memory` is refused: see the docs).
     Counted against the tenant's snapshot storage quota.

    Args:
        sandbox_id (str):
        body (CreateSnapshotRequest): Request for CreateSnapshot.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSnapshotResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
