from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.list_worker_sandboxes_response import ListWorkerSandboxesResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    worker_id: str,
    *,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["pageSize"] = page_size

    params["pageToken"] = page_token

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/workers/{worker_id}/sandboxes".format(
            worker_id=quote(str(worker_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListWorkerSandboxesResponse | Status:
    if response.status_code == 200:
        response_200 = ListWorkerSandboxesResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListWorkerSandboxesResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> Response[ListWorkerSandboxesResponse | Status]:
    """Lists the sandboxes a worker holds, of every tenant, newest first
     (deleted ones left out): what placement and moves need of each, not
     what it holds (no env, labels, metadata or policy). Pages by cursor,
     so a sandbox made meanwhile never shifts the next page.

    Args:
        worker_id (str):
        page_size (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListWorkerSandboxesResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
        page_size=page_size,
        page_token=page_token,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> ListWorkerSandboxesResponse | Status | None:
    """Lists the sandboxes a worker holds, of every tenant, newest first
     (deleted ones left out): what placement and moves need of each, not
     what it holds (no env, labels, metadata or policy). Pages by cursor,
     so a sandbox made meanwhile never shifts the next page.

    Args:
        worker_id (str):
        page_size (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListWorkerSandboxesResponse | Status
    """

    return sync_detailed(
        worker_id=worker_id,
        client=client,
        page_size=page_size,
        page_token=page_token,
    ).parsed


async def asyncio_detailed(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> Response[ListWorkerSandboxesResponse | Status]:
    """Lists the sandboxes a worker holds, of every tenant, newest first
     (deleted ones left out): what placement and moves need of each, not
     what it holds (no env, labels, metadata or policy). Pages by cursor,
     so a sandbox made meanwhile never shifts the next page.

    Args:
        worker_id (str):
        page_size (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListWorkerSandboxesResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
        page_size=page_size,
        page_token=page_token,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
) -> ListWorkerSandboxesResponse | Status | None:
    """Lists the sandboxes a worker holds, of every tenant, newest first
     (deleted ones left out): what placement and moves need of each, not
     what it holds (no env, labels, metadata or policy). Pages by cursor,
     so a sandbox made meanwhile never shifts the next page.

    Args:
        worker_id (str):
        page_size (int | Unset):
        page_token (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListWorkerSandboxesResponse | Status
    """

    return (
        await asyncio_detailed(
            worker_id=worker_id,
            client=client,
            page_size=page_size,
            page_token=page_token,
        )
    ).parsed
