from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.attach_response import AttachResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    *,
    open_command_command: list[str] | Unset = UNSET,
    open_command_cwd: str | Unset = UNSET,
    open_command_user: str | Unset = UNSET,
    open_command_tag: str | Unset = UNSET,
    open_process_pid: int | Unset = UNSET,
    open_process_tag: str | Unset = UNSET,
    open_size_rows: int | Unset = UNSET,
    open_size_cols: int | Unset = UNSET,
    input_: str | Unset = UNSET,
    resize_rows: int | Unset = UNSET,
    resize_cols: int | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_open_command_command: list[str] | Unset = UNSET
    if not isinstance(open_command_command, Unset):
        json_open_command_command = open_command_command

    params["open.command.command"] = json_open_command_command

    params["open.command.cwd"] = open_command_cwd

    params["open.command.user"] = open_command_user

    params["open.command.tag"] = open_command_tag

    params["open.process.pid"] = open_process_pid

    params["open.process.tag"] = open_process_tag

    params["open.size.rows"] = open_size_rows

    params["open.size.cols"] = open_size_cols

    params["input"] = input_

    params["resize.rows"] = resize_rows

    params["resize.cols"] = resize_cols

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/pty".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AttachResponse | Status:
    if response.status_code == 200:
        response_200 = AttachResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[AttachResponse | Status]:
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
    open_command_command: list[str] | Unset = UNSET,
    open_command_cwd: str | Unset = UNSET,
    open_command_user: str | Unset = UNSET,
    open_command_tag: str | Unset = UNSET,
    open_process_pid: int | Unset = UNSET,
    open_process_tag: str | Unset = UNSET,
    open_size_rows: int | Unset = UNSET,
    open_size_cols: int | Unset = UNSET,
    input_: str | Unset = UNSET,
    resize_rows: int | Unset = UNSET,
    resize_cols: int | Unset = UNSET,
) -> Response[AttachResponse | Status]:
    """The first message carries `sandbox_id` and `open`; later ones carry
     input and resizes. The server answers with the pid, then output, then
     the exit. Open as a WebSocket: text frames carry JSON request messages (the first opens), binary
    frames raw input; the server sends raw output as binary frames and other messages as JSON text
    frames. Without a WebSocket upgrade the call is refused (400). Browsers may pass the credential as
    the subprotocol `bearer.<token>`.

    Args:
        sandbox_id (str):
        open_command_command (list[str] | Unset):
        open_command_cwd (str | Unset):
        open_command_user (str | Unset):
        open_command_tag (str | Unset):
        open_process_pid (int | Unset):
        open_process_tag (str | Unset):
        open_size_rows (int | Unset):
        open_size_cols (int | Unset):
        input_ (str | Unset):
        resize_rows (int | Unset):
        resize_cols (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AttachResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        open_command_command=open_command_command,
        open_command_cwd=open_command_cwd,
        open_command_user=open_command_user,
        open_command_tag=open_command_tag,
        open_process_pid=open_process_pid,
        open_process_tag=open_process_tag,
        open_size_rows=open_size_rows,
        open_size_cols=open_size_cols,
        input_=input_,
        resize_rows=resize_rows,
        resize_cols=resize_cols,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    open_command_command: list[str] | Unset = UNSET,
    open_command_cwd: str | Unset = UNSET,
    open_command_user: str | Unset = UNSET,
    open_command_tag: str | Unset = UNSET,
    open_process_pid: int | Unset = UNSET,
    open_process_tag: str | Unset = UNSET,
    open_size_rows: int | Unset = UNSET,
    open_size_cols: int | Unset = UNSET,
    input_: str | Unset = UNSET,
    resize_rows: int | Unset = UNSET,
    resize_cols: int | Unset = UNSET,
) -> AttachResponse | Status | None:
    """The first message carries `sandbox_id` and `open`; later ones carry
     input and resizes. The server answers with the pid, then output, then
     the exit. Open as a WebSocket: text frames carry JSON request messages (the first opens), binary
    frames raw input; the server sends raw output as binary frames and other messages as JSON text
    frames. Without a WebSocket upgrade the call is refused (400). Browsers may pass the credential as
    the subprotocol `bearer.<token>`.

    Args:
        sandbox_id (str):
        open_command_command (list[str] | Unset):
        open_command_cwd (str | Unset):
        open_command_user (str | Unset):
        open_command_tag (str | Unset):
        open_process_pid (int | Unset):
        open_process_tag (str | Unset):
        open_size_rows (int | Unset):
        open_size_cols (int | Unset):
        input_ (str | Unset):
        resize_rows (int | Unset):
        resize_cols (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AttachResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        open_command_command=open_command_command,
        open_command_cwd=open_command_cwd,
        open_command_user=open_command_user,
        open_command_tag=open_command_tag,
        open_process_pid=open_process_pid,
        open_process_tag=open_process_tag,
        open_size_rows=open_size_rows,
        open_size_cols=open_size_cols,
        input_=input_,
        resize_rows=resize_rows,
        resize_cols=resize_cols,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    open_command_command: list[str] | Unset = UNSET,
    open_command_cwd: str | Unset = UNSET,
    open_command_user: str | Unset = UNSET,
    open_command_tag: str | Unset = UNSET,
    open_process_pid: int | Unset = UNSET,
    open_process_tag: str | Unset = UNSET,
    open_size_rows: int | Unset = UNSET,
    open_size_cols: int | Unset = UNSET,
    input_: str | Unset = UNSET,
    resize_rows: int | Unset = UNSET,
    resize_cols: int | Unset = UNSET,
) -> Response[AttachResponse | Status]:
    """The first message carries `sandbox_id` and `open`; later ones carry
     input and resizes. The server answers with the pid, then output, then
     the exit. Open as a WebSocket: text frames carry JSON request messages (the first opens), binary
    frames raw input; the server sends raw output as binary frames and other messages as JSON text
    frames. Without a WebSocket upgrade the call is refused (400). Browsers may pass the credential as
    the subprotocol `bearer.<token>`.

    Args:
        sandbox_id (str):
        open_command_command (list[str] | Unset):
        open_command_cwd (str | Unset):
        open_command_user (str | Unset):
        open_command_tag (str | Unset):
        open_process_pid (int | Unset):
        open_process_tag (str | Unset):
        open_size_rows (int | Unset):
        open_size_cols (int | Unset):
        input_ (str | Unset):
        resize_rows (int | Unset):
        resize_cols (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AttachResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        open_command_command=open_command_command,
        open_command_cwd=open_command_cwd,
        open_command_user=open_command_user,
        open_command_tag=open_command_tag,
        open_process_pid=open_process_pid,
        open_process_tag=open_process_tag,
        open_size_rows=open_size_rows,
        open_size_cols=open_size_cols,
        input_=input_,
        resize_rows=resize_rows,
        resize_cols=resize_cols,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    open_command_command: list[str] | Unset = UNSET,
    open_command_cwd: str | Unset = UNSET,
    open_command_user: str | Unset = UNSET,
    open_command_tag: str | Unset = UNSET,
    open_process_pid: int | Unset = UNSET,
    open_process_tag: str | Unset = UNSET,
    open_size_rows: int | Unset = UNSET,
    open_size_cols: int | Unset = UNSET,
    input_: str | Unset = UNSET,
    resize_rows: int | Unset = UNSET,
    resize_cols: int | Unset = UNSET,
) -> AttachResponse | Status | None:
    """The first message carries `sandbox_id` and `open`; later ones carry
     input and resizes. The server answers with the pid, then output, then
     the exit. Open as a WebSocket: text frames carry JSON request messages (the first opens), binary
    frames raw input; the server sends raw output as binary frames and other messages as JSON text
    frames. Without a WebSocket upgrade the call is refused (400). Browsers may pass the credential as
    the subprotocol `bearer.<token>`.

    Args:
        sandbox_id (str):
        open_command_command (list[str] | Unset):
        open_command_cwd (str | Unset):
        open_command_user (str | Unset):
        open_command_tag (str | Unset):
        open_process_pid (int | Unset):
        open_process_tag (str | Unset):
        open_size_rows (int | Unset):
        open_size_cols (int | Unset):
        input_ (str | Unset):
        resize_rows (int | Unset):
        resize_cols (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AttachResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            open_command_command=open_command_command,
            open_command_cwd=open_command_cwd,
            open_command_user=open_command_user,
            open_command_tag=open_command_tag,
            open_process_pid=open_process_pid,
            open_process_tag=open_process_tag,
            open_size_rows=open_size_rows,
            open_size_cols=open_size_cols,
            input_=input_,
            resize_rows=resize_rows,
            resize_cols=resize_cols,
        )
    ).parsed
