from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.send_process_input_request import SendProcessInputRequest
from ...models.send_process_input_response import SendProcessInputResponse
from ...models.status import Status
from ...types import UNSET, Response


def _get_kwargs(
    sandbox_id: str,
    process_pid: str,
    *,
    body: list[SendProcessInputRequest] | SendProcessInputRequest | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/processes/{process_pid}:input".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            process_pid=quote(str(process_pid), safe=""),
        ),
    }

    if isinstance(body, list[SendProcessInputRequest] | SendProcessInputRequest):
        if isinstance(body, SendProcessInputRequest):
            _kwargs["json"] = body.to_dict()
        else:
            _kwargs["json"] = []
            for body_type_1_item_data in body:
                body_type_1_item = body_type_1_item_data.to_dict()
                _kwargs["json"].append(body_type_1_item)

        headers["Content-Type"] = "application/json"
    if isinstance(body, str):
        _kwargs["content"] = body.payload
        headers["Content-Type"] = "application/octet-stream"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> SendProcessInputResponse | Status:
    if response.status_code == 200:
        response_200 = SendProcessInputResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[SendProcessInputResponse | Status]:
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
    body: list[SendProcessInputRequest] | SendProcessInputRequest | str | Unset = UNSET,
) -> Response[SendProcessInputResponse | Status]:
    """Writes to a process's stdin (or PTY). Over REST, one message per call.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (list[SendProcessInputRequest] | SendProcessInputRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SendProcessInputResponse | Status]
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
    body: list[SendProcessInputRequest] | SendProcessInputRequest | str | Unset = UNSET,
) -> SendProcessInputResponse | Status | None:
    """Writes to a process's stdin (or PTY). Over REST, one message per call.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (list[SendProcessInputRequest] | SendProcessInputRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SendProcessInputResponse | Status
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
    body: list[SendProcessInputRequest] | SendProcessInputRequest | str | Unset = UNSET,
) -> Response[SendProcessInputResponse | Status]:
    """Writes to a process's stdin (or PTY). Over REST, one message per call.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (list[SendProcessInputRequest] | SendProcessInputRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SendProcessInputResponse | Status]
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
    body: list[SendProcessInputRequest] | SendProcessInputRequest | str | Unset = UNSET,
) -> SendProcessInputResponse | Status | None:
    """Writes to a process's stdin (or PTY). Over REST, one message per call.

    Args:
        sandbox_id (str):
        process_pid (str):
        body (list[SendProcessInputRequest] | SendProcessInputRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SendProcessInputResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            process_pid=process_pid,
            client=client,
            body=body,
        )
    ).parsed
