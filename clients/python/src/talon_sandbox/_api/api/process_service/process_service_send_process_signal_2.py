from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.send_process_signal_request import SendProcessSignalRequest
from ...models.send_process_signal_response import SendProcessSignalResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    process_tag: str,
    *,
    body: SendProcessSignalRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/processes/tags/{process_tag}:signal".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            process_tag=quote(str(process_tag), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> SendProcessSignalResponse | Status:
    if response.status_code == 200:
        response_200 = SendProcessSignalResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[SendProcessSignalResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    process_tag: str,
    *,
    client: AuthenticatedClient | Client,
    body: SendProcessSignalRequest,
) -> Response[SendProcessSignalResponse | Status]:
    """Sends a signal to a process.

    Args:
        sandbox_id (str):
        process_tag (str):
        body (SendProcessSignalRequest): Request for SendProcessSignal.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SendProcessSignalResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_tag=process_tag,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    process_tag: str,
    *,
    client: AuthenticatedClient | Client,
    body: SendProcessSignalRequest,
) -> SendProcessSignalResponse | Status | None:
    """Sends a signal to a process.

    Args:
        sandbox_id (str):
        process_tag (str):
        body (SendProcessSignalRequest): Request for SendProcessSignal.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SendProcessSignalResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        process_tag=process_tag,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    process_tag: str,
    *,
    client: AuthenticatedClient | Client,
    body: SendProcessSignalRequest,
) -> Response[SendProcessSignalResponse | Status]:
    """Sends a signal to a process.

    Args:
        sandbox_id (str):
        process_tag (str):
        body (SendProcessSignalRequest): Request for SendProcessSignal.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SendProcessSignalResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_tag=process_tag,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    process_tag: str,
    *,
    client: AuthenticatedClient | Client,
    body: SendProcessSignalRequest,
) -> SendProcessSignalResponse | Status | None:
    """Sends a signal to a process.

    Args:
        sandbox_id (str):
        process_tag (str):
        body (SendProcessSignalRequest): Request for SendProcessSignal.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SendProcessSignalResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            process_tag=process_tag,
            client=client,
            body=body,
        )
    ).parsed
