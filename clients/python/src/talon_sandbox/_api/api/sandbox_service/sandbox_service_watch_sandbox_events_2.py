from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    sandbox_id: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["sandboxId"] = sandbox_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandbox-events",
        "params": params,
    }

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
    *,
    client: AuthenticatedClient | Client,
    sandbox_id: str | Unset = UNSET,
) -> Response[Status | str]:
    """Streams state changes of one sandbox, or of all the tenant's sandboxes
     when `sandbox_id` is empty. The first message is the current state.

    Args:
        sandbox_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    sandbox_id: str | Unset = UNSET,
) -> Status | str | None:
    """Streams state changes of one sandbox, or of all the tenant's sandboxes
     when `sandbox_id` is empty. The first message is the current state.

    Args:
        sandbox_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return sync_detailed(
        client=client,
        sandbox_id=sandbox_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    sandbox_id: str | Unset = UNSET,
) -> Response[Status | str]:
    """Streams state changes of one sandbox, or of all the tenant's sandboxes
     when `sandbox_id` is empty. The first message is the current state.

    Args:
        sandbox_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    sandbox_id: str | Unset = UNSET,
) -> Status | str | None:
    """Streams state changes of one sandbox, or of all the tenant's sandboxes
     when `sandbox_id` is empty. The first message is the current state.

    Args:
        sandbox_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return (
        await asyncio_detailed(
            client=client,
            sandbox_id=sandbox_id,
        )
    ).parsed
