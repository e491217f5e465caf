from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.close_process_stdin_request import CloseProcessStdinRequest
from ...models.close_process_stdin_response import CloseProcessStdinResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    process_pid: str,
    *,
    body: CloseProcessStdinRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/processes/{process_pid}:closeStdin".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            process_pid=quote(str(process_pid), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CloseProcessStdinResponse | Status:
    if response.status_code == 200:
        response_200 = CloseProcessStdinResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CloseProcessStdinResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    process_pid: str,
    *,
    client: AuthenticatedClient | Client,
    body: CloseProcessStdinRequest,
) -> Response[CloseProcessStdinResponse | Status]:
    """Closes a process's stdin.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (CloseProcessStdinRequest): Request for CloseProcessStdin.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CloseProcessStdinResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_pid=process_pid,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    process_pid: str,
    *,
    client: AuthenticatedClient | Client,
    body: CloseProcessStdinRequest,
) -> CloseProcessStdinResponse | Status | None:
    """Closes a process's stdin.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (CloseProcessStdinRequest): Request for CloseProcessStdin.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CloseProcessStdinResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        process_pid=process_pid,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    process_pid: str,
    *,
    client: AuthenticatedClient | Client,
    body: CloseProcessStdinRequest,
) -> Response[CloseProcessStdinResponse | Status]:
    """Closes a process's stdin.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (CloseProcessStdinRequest): Request for CloseProcessStdin.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CloseProcessStdinResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_pid=process_pid,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    process_pid: str,
    *,
    client: AuthenticatedClient | Client,
    body: CloseProcessStdinRequest,
) -> CloseProcessStdinResponse | Status | None:
    """Closes a process's stdin.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (CloseProcessStdinRequest): Request for CloseProcessStdin.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CloseProcessStdinResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            process_pid=process_pid,
            client=client,
            body=body,
        )
    ).parsed
