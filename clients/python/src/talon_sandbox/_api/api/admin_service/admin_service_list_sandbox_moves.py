from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.list_sandbox_moves_response import ListSandboxMovesResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    sandbox_id: str | Unset = UNSET,
    worker_id: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["pageSize"] = page_size

    params["pageToken"] = page_token

    params["sandboxId"] = sandbox_id

    params["workerId"] = worker_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/sandbox-moves",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListSandboxMovesResponse | Status:
    if response.status_code == 200:
        response_200 = ListSandboxMovesResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListSandboxMovesResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    sandbox_id: str | Unset = UNSET,
    worker_id: str | Unset = UNSET,
) -> Response[ListSandboxMovesResponse | Status]:
    """The failover history: every move of a sandbox from one worker to
     another (or started again on the same one), by hand or by the
     autopilot, newest first; of one sandbox or one worker (moved from or
     to) when asked. Pages by cursor, so a move recorded meanwhile never
     shifts the next page.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        sandbox_id (str | Unset):
        worker_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListSandboxMovesResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        sandbox_id=sandbox_id,
        worker_id=worker_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    sandbox_id: str | Unset = UNSET,
    worker_id: str | Unset = UNSET,
) -> ListSandboxMovesResponse | Status | None:
    """The failover history: every move of a sandbox from one worker to
     another (or started again on the same one), by hand or by the
     autopilot, newest first; of one sandbox or one worker (moved from or
     to) when asked. Pages by cursor, so a move recorded meanwhile never
     shifts the next page.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        sandbox_id (str | Unset):
        worker_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListSandboxMovesResponse | Status
    """

    return sync_detailed(
        client=client,
        page_size=page_size,
        page_token=page_token,
        sandbox_id=sandbox_id,
        worker_id=worker_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    sandbox_id: str | Unset = UNSET,
    worker_id: str | Unset = UNSET,
) -> Response[ListSandboxMovesResponse | Status]:
    """The failover history: every move of a sandbox from one worker to
     another (or started again on the same one), by hand or by the
     autopilot, newest first; of one sandbox or one worker (moved from or
     to) when asked. Pages by cursor, so a move recorded meanwhile never
     shifts the next page.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        sandbox_id (str | Unset):
        worker_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListSandboxMovesResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        sandbox_id=sandbox_id,
        worker_id=worker_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    sandbox_id: str | Unset = UNSET,
    worker_id: str | Unset = UNSET,
) -> ListSandboxMovesResponse | Status | None:
    """The failover history: every move of a sandbox from one worker to
     another (or started again on the same one), by hand or by the
     autopilot, newest first; of one sandbox or one worker (moved from or
     to) when asked. Pages by cursor, so a move recorded meanwhile never
     shifts the next page.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        sandbox_id (str | Unset):
        worker_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListSandboxMovesResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            page_size=page_size,
            page_token=page_token,
            sandbox_id=sandbox_id,
            worker_id=worker_id,
        )
    ).parsed
