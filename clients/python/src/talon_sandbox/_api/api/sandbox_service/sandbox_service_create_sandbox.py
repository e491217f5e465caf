from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.create_sandbox_response import CreateSandboxResponse
from ...models.sandbox import Sandbox
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: Sandbox,
    wait_until_running: bool | Unset = UNSET,
    wait_timeout: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["waitUntilRunning"] = wait_until_running

    params["waitTimeout"] = wait_timeout

    params["idempotencyKey"] = idempotency_key

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreateSandboxResponse | Status:
    if response.status_code == 200:
        response_200 = CreateSandboxResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreateSandboxResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Sandbox,
    wait_until_running: bool | Unset = UNSET,
    wait_timeout: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[CreateSandboxResponse | Status]:
    """Creates a sandbox. With `wait_until_running` the call returns once the
     sandbox is RUNNING, or DEADLINE_EXCEEDED (with the current state in the
     message and a `SandboxStateDetail` detail) when `wait_timeout` passes.

    Args:
        wait_until_running (bool | Unset):
        wait_timeout (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s
        idempotency_key (str | Unset):
        body (Sandbox): A sandbox. Fields marked output-only are set by the server; values sent
             by a client in them are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSandboxResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
        wait_until_running=wait_until_running,
        wait_timeout=wait_timeout,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: Sandbox,
    wait_until_running: bool | Unset = UNSET,
    wait_timeout: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> CreateSandboxResponse | Status | None:
    """Creates a sandbox. With `wait_until_running` the call returns once the
     sandbox is RUNNING, or DEADLINE_EXCEEDED (with the current state in the
     message and a `SandboxStateDetail` detail) when `wait_timeout` passes.

    Args:
        wait_until_running (bool | Unset):
        wait_timeout (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s
        idempotency_key (str | Unset):
        body (Sandbox): A sandbox. Fields marked output-only are set by the server; values sent
             by a client in them are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSandboxResponse | Status
    """

    return sync_detailed(
        client=client,
        body=body,
        wait_until_running=wait_until_running,
        wait_timeout=wait_timeout,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Sandbox,
    wait_until_running: bool | Unset = UNSET,
    wait_timeout: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[CreateSandboxResponse | Status]:
    """Creates a sandbox. With `wait_until_running` the call returns once the
     sandbox is RUNNING, or DEADLINE_EXCEEDED (with the current state in the
     message and a `SandboxStateDetail` detail) when `wait_timeout` passes.

    Args:
        wait_until_running (bool | Unset):
        wait_timeout (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s
        idempotency_key (str | Unset):
        body (Sandbox): A sandbox. Fields marked output-only are set by the server; values sent
             by a client in them are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateSandboxResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
        wait_until_running=wait_until_running,
        wait_timeout=wait_timeout,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: Sandbox,
    wait_until_running: bool | Unset = UNSET,
    wait_timeout: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> CreateSandboxResponse | Status | None:
    """Creates a sandbox. With `wait_until_running` the call returns once the
     sandbox is RUNNING, or DEADLINE_EXCEEDED (with the current state in the
     message and a `SandboxStateDetail` detail) when `wait_timeout` passes.

    Args:
        wait_until_running (bool | Unset):
        wait_timeout (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s
        idempotency_key (str | Unset):
        body (Sandbox): A sandbox. Fields marked output-only are set by the server; values sent
             by a client in them are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateSandboxResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            wait_until_running=wait_until_running,
            wait_timeout=wait_timeout,
            idempotency_key=idempotency_key,
        )
    ).parsed
