from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.list_processes_response import ListProcessesResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    *,
    include_exited: bool | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["includeExited"] = include_exited

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/processes".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListProcessesResponse | Status:
    if response.status_code == 200:
        response_200 = ListProcessesResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListProcessesResponse | Status]:
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
    include_exited: bool | Unset = UNSET,
) -> Response[ListProcessesResponse | Status]:
    """Lists the sandbox's processes.

    Args:
        sandbox_id (str):
        include_exited (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListProcessesResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        include_exited=include_exited,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    include_exited: bool | Unset = UNSET,
) -> ListProcessesResponse | Status | None:
    """Lists the sandbox's processes.

    Args:
        sandbox_id (str):
        include_exited (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListProcessesResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        include_exited=include_exited,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    include_exited: bool | Unset = UNSET,
) -> Response[ListProcessesResponse | Status]:
    """Lists the sandbox's processes.

    Args:
        sandbox_id (str):
        include_exited (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListProcessesResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        include_exited=include_exited,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    include_exited: bool | Unset = UNSET,
) -> ListProcessesResponse | Status | None:
    """Lists the sandbox's processes.

    Args:
        sandbox_id (str):
        include_exited (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListProcessesResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            include_exited=include_exited,
        )
    ).parsed
