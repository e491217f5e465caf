from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.create_file_url_request import CreateFileUrlRequest
from ...models.create_file_url_response import CreateFileUrlResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: CreateFileUrlRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/file-urls".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreateFileUrlResponse | Status:
    if response.status_code == 200:
        response_200 = CreateFileUrlResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreateFileUrlResponse | Status]:
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
    body: CreateFileUrlRequest,
) -> Response[CreateFileUrlResponse | Status]:
    """Signs a short-lived URL on the gateway that reads (GET) or writes
     (POST or PUT, the body as the file's bytes) one file of one sandbox
     with no other credential: for a browser, curl or another service. The
     token has its own issuer and audience and opens only ReadFile or
     WriteFile, only of that sandbox and path.

    Args:
        sandbox_id (str):
        body (CreateFileUrlRequest): Request for CreateFileUrl.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateFileUrlResponse | Status]
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
    body: CreateFileUrlRequest,
) -> CreateFileUrlResponse | Status | None:
    """Signs a short-lived URL on the gateway that reads (GET) or writes
     (POST or PUT, the body as the file's bytes) one file of one sandbox
     with no other credential: for a browser, curl or another service. The
     token has its own issuer and audience and opens only ReadFile or
     WriteFile, only of that sandbox and path.

    Args:
        sandbox_id (str):
        body (CreateFileUrlRequest): Request for CreateFileUrl.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateFileUrlResponse | Status
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
    body: CreateFileUrlRequest,
) -> Response[CreateFileUrlResponse | Status]:
    """Signs a short-lived URL on the gateway that reads (GET) or writes
     (POST or PUT, the body as the file's bytes) one file of one sandbox
     with no other credential: for a browser, curl or another service. The
     token has its own issuer and audience and opens only ReadFile or
     WriteFile, only of that sandbox and path.

    Args:
        sandbox_id (str):
        body (CreateFileUrlRequest): Request for CreateFileUrl.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateFileUrlResponse | Status]
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
    body: CreateFileUrlRequest,
) -> CreateFileUrlResponse | Status | None:
    """Signs a short-lived URL on the gateway that reads (GET) or writes
     (POST or PUT, the body as the file's bytes) one file of one sandbox
     with no other credential: for a browser, curl or another service. The
     token has its own issuer and audience and opens only ReadFile or
     WriteFile, only of that sandbox and path.

    Args:
        sandbox_id (str):
        body (CreateFileUrlRequest): Request for CreateFileUrl.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateFileUrlResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
