from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.delete_worker_response import DeleteWorkerResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    worker_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/admin/workers/{worker_id}".format(
            worker_id=quote(str(worker_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeleteWorkerResponse | Status:
    if response.status_code == 200:
        response_200 = DeleteWorkerResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DeleteWorkerResponse | Status]:
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
) -> Response[DeleteWorkerResponse | Status]:
    """Forgets a worker that is gone for good: one with no session whose
     lease has lapsed (it is lost), holding no sandbox (a stopped one keeps
     its disk there) and no snapshot. FAILED_PRECONDITION otherwise, saying
     which. A worker that registers again later is listed again.

    Args:
        worker_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteWorkerResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> DeleteWorkerResponse | Status | None:
    """Forgets a worker that is gone for good: one with no session whose
     lease has lapsed (it is lost), holding no sandbox (a stopped one keeps
     its disk there) and no snapshot. FAILED_PRECONDITION otherwise, saying
     which. A worker that registers again later is listed again.

    Args:
        worker_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteWorkerResponse | Status
    """

    return sync_detailed(
        worker_id=worker_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeleteWorkerResponse | Status]:
    """Forgets a worker that is gone for good: one with no session whose
     lease has lapsed (it is lost), holding no sandbox (a stopped one keeps
     its disk there) and no snapshot. FAILED_PRECONDITION otherwise, saying
     which. A worker that registers again later is listed again.

    Args:
        worker_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteWorkerResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> DeleteWorkerResponse | Status | None:
    """Forgets a worker that is gone for good: one with no session whose
     lease has lapsed (it is lost), holding no sandbox (a stopped one keeps
     its disk there) and no snapshot. FAILED_PRECONDITION otherwise, saying
     which. A worker that registers again later is listed again.

    Args:
        worker_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteWorkerResponse | Status
    """

    return (
        await asyncio_detailed(
            worker_id=worker_id,
            client=client,
        )
    ).parsed
