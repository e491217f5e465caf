from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.drain_worker_request import DrainWorkerRequest
from ...models.drain_worker_response import DrainWorkerResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    worker_id: str,
    *,
    body: DrainWorkerRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/admin/workers/{worker_id}:drain".format(
            worker_id=quote(str(worker_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DrainWorkerResponse | Status:
    if response.status_code == 200:
        response_200 = DrainWorkerResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DrainWorkerResponse | Status]:
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
    body: DrainWorkerRequest,
) -> Response[DrainWorkerResponse | Status]:
    """Stops placing new sandboxes on a worker; or, with `undrain`, resumes.

    Args:
        worker_id (str):
        body (DrainWorkerRequest): Request for DrainWorker.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DrainWorkerResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainWorkerRequest,
) -> DrainWorkerResponse | Status | None:
    """Stops placing new sandboxes on a worker; or, with `undrain`, resumes.

    Args:
        worker_id (str):
        body (DrainWorkerRequest): Request for DrainWorker.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DrainWorkerResponse | Status
    """

    return sync_detailed(
        worker_id=worker_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainWorkerRequest,
) -> Response[DrainWorkerResponse | Status]:
    """Stops placing new sandboxes on a worker; or, with `undrain`, resumes.

    Args:
        worker_id (str):
        body (DrainWorkerRequest): Request for DrainWorker.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DrainWorkerResponse | Status]
    """

    kwargs = _get_kwargs(
        worker_id=worker_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    worker_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainWorkerRequest,
) -> DrainWorkerResponse | Status | None:
    """Stops placing new sandboxes on a worker; or, with `undrain`, resumes.

    Args:
        worker_id (str):
        body (DrainWorkerRequest): Request for DrainWorker.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DrainWorkerResponse | Status
    """

    return (
        await asyncio_detailed(
            worker_id=worker_id,
            client=client,
            body=body,
        )
    ).parsed
