from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.fork_sandbox_request import ForkSandboxRequest
from ...models.fork_sandbox_response import ForkSandboxResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: ForkSandboxRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}:fork".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ForkSandboxResponse | Status:
    if response.status_code == 200:
        response_200 = ForkSandboxResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ForkSandboxResponse | Status]:
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
    body: ForkSandboxRequest,
) -> Response[ForkSandboxResponse | Status]:
    """Creates `count` new sandboxes from a running or paused sandbox's
     current filesystem, each with its own id, address, tokens and secrets
     and the source's settings (resources, environment, secrets, egress
     policy, timeout, metadata, labels); answers once every one runs.

    Args:
        sandbox_id (str):
        body (ForkSandboxRequest): Request for ForkSandbox.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ForkSandboxResponse | Status]
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
    body: ForkSandboxRequest,
) -> ForkSandboxResponse | Status | None:
    """Creates `count` new sandboxes from a running or paused sandbox's
     current filesystem, each with its own id, address, tokens and secrets
     and the source's settings (resources, environment, secrets, egress
     policy, timeout, metadata, labels); answers once every one runs.

    Args:
        sandbox_id (str):
        body (ForkSandboxRequest): Request for ForkSandbox.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ForkSandboxResponse | Status
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
    body: ForkSandboxRequest,
) -> Response[ForkSandboxResponse | Status]:
    """Creates `count` new sandboxes from a running or paused sandbox's
     current filesystem, each with its own id, address, tokens and secrets
     and the source's settings (resources, environment, secrets, egress
     policy, timeout, metadata, labels); answers once every one runs.

    Args:
        sandbox_id (str):
        body (ForkSandboxRequest): Request for ForkSandbox.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ForkSandboxResponse | Status]
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
    body: ForkSandboxRequest,
) -> ForkSandboxResponse | Status | None:
    """Creates `count` new sandboxes from a running or paused sandbox's
     current filesystem, each with its own id, address, tokens and secrets
     and the source's settings (resources, environment, secrets, egress
     policy, timeout, metadata, labels); answers once every one runs.

    Args:
        sandbox_id (str):
        body (ForkSandboxRequest): Request for ForkSandbox.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ForkSandboxResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
