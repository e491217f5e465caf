from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.remove_path_response import RemovePathResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    *,
    path: str | Unset = UNSET,
    recursive: bool | Unset = UNSET,
    user: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["path"] = path

    params["recursive"] = recursive

    params["user"] = user

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/sandboxes/{sandbox_id}/files".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> RemovePathResponse | Status:
    if response.status_code == 200:
        response_200 = RemovePathResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[RemovePathResponse | Status]:
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
    path: str | Unset = UNSET,
    recursive: bool | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Response[RemovePathResponse | Status]:
    """Removes a path; a directory only with `recursive`.

    Args:
        sandbox_id (str):
        path (str | Unset):
        recursive (bool | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RemovePathResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        path=path,
        recursive=recursive,
        user=user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    path: str | Unset = UNSET,
    recursive: bool | Unset = UNSET,
    user: str | Unset = UNSET,
) -> RemovePathResponse | Status | None:
    """Removes a path; a directory only with `recursive`.

    Args:
        sandbox_id (str):
        path (str | Unset):
        recursive (bool | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RemovePathResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        path=path,
        recursive=recursive,
        user=user,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    path: str | Unset = UNSET,
    recursive: bool | Unset = UNSET,
    user: str | Unset = UNSET,
) -> Response[RemovePathResponse | Status]:
    """Removes a path; a directory only with `recursive`.

    Args:
        sandbox_id (str):
        path (str | Unset):
        recursive (bool | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RemovePathResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        path=path,
        recursive=recursive,
        user=user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    path: str | Unset = UNSET,
    recursive: bool | Unset = UNSET,
    user: str | Unset = UNSET,
) -> RemovePathResponse | Status | None:
    """Removes a path; a directory only with `recursive`.

    Args:
        sandbox_id (str):
        path (str | Unset):
        recursive (bool | Unset):
        user (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RemovePathResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            path=path,
            recursive=recursive,
            user=user,
        )
    ).parsed
