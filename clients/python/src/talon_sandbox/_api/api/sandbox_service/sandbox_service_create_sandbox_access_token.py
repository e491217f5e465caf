from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.create_sandbox_access_token_request import (
    CreateSandboxAccessTokenRequest,
)
from ...models.create_sandbox_access_token_response import (
    CreateSandboxAccessTokenResponse,
)
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: CreateSandboxAccessTokenRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/access-token".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreateSandboxAccessTokenResponse | Status:
    if response.status_code == 200:
        response_200 = CreateSandboxAccessTokenResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreateSandboxAccessTokenResponse | Status]:
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
    body: CreateSandboxAccessTokenRequest,
) -> Response[CreateSandboxAccessTokenResponse | Status]:
    """Returns the sandbox's access token: a bearer credential that opens only
     this sandbox's data plane (ProcessService, PtyService, FilesystemService
     but CreateFileUrl, and its previews) with the developer role, for as
     long as the sandbox exists. Every call for one sandbox returns the same
     token; it is what the E2B-compatible API hands out as
     `envdAccessToken`. Treat it like an API key.

    Args:
        sandbox_id (str):
        body (CreateSandboxAccessTokenRequest): Request for CreateSandboxAccessToken.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSandboxAccessTokenResponse | Status]
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
    body: CreateSandboxAccessTokenRequest,
) -> CreateSandboxAccessTokenResponse | Status | None:
    """Returns the sandbox's access token: a bearer credential that opens only
     this sandbox's data plane (ProcessService, PtyService, FilesystemService
     but CreateFileUrl, and its previews) with the developer role, for as
     long as the sandbox exists. Every call for one sandbox returns the same
     token; it is what the E2B-compatible API hands out as
     `envdAccessToken`. Treat it like an API key.

    Args:
        sandbox_id (str):
        body (CreateSandboxAccessTokenRequest): Request for CreateSandboxAccessToken.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSandboxAccessTokenResponse | Status
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
    body: CreateSandboxAccessTokenRequest,
) -> Response[CreateSandboxAccessTokenResponse | Status]:
    """Returns the sandbox's access token: a bearer credential that opens only
     this sandbox's data plane (ProcessService, PtyService, FilesystemService
     but CreateFileUrl, and its previews) with the developer role, for as
     long as the sandbox exists. Every call for one sandbox returns the same
     token; it is what the E2B-compatible API hands out as
     `envdAccessToken`. Treat it like an API key.

    Args:
        sandbox_id (str):
        body (CreateSandboxAccessTokenRequest): Request for CreateSandboxAccessToken.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSandboxAccessTokenResponse | Status]
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
    body: CreateSandboxAccessTokenRequest,
) -> CreateSandboxAccessTokenResponse | Status | None:
    """Returns the sandbox's access token: a bearer credential that opens only
     this sandbox's data plane (ProcessService, PtyService, FilesystemService
     but CreateFileUrl, and its previews) with the developer role, for as
     long as the sandbox exists. Every call for one sandbox returns the same
     token; it is what the E2B-compatible API hands out as
     `envdAccessToken`. Treat it like an API key.

    Args:
        sandbox_id (str):
        body (CreateSandboxAccessTokenRequest): Request for CreateSandboxAccessToken.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSandboxAccessTokenResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
