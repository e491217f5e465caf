from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.get_process_logs_response import GetProcessLogsResponse
from ...models.process_service_get_process_logs_stream import (
    ProcessServiceGetProcessLogsStream,
)
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    process_pid_path: str,
    *,
    process_pid_query: int | Unset = UNSET,
    process_tag: str | Unset = UNSET,
    after_seq: str | Unset = UNSET,
    page_size: int | Unset = UNSET,
    stream: ProcessServiceGetProcessLogsStream | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["process.pid"] = process_pid_query

    params["process.tag"] = process_tag

    params["afterSeq"] = after_seq

    params["pageSize"] = page_size

    json_stream: str | Unset = UNSET
    if not isinstance(stream, Unset):
        json_stream = stream.value

    params["stream"] = json_stream

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/processes/{process_pid_path}/logs".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            process_pid_path=quote(str(process_pid_path), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> GetProcessLogsResponse | Status:
    if response.status_code == 200:
        response_200 = GetProcessLogsResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[GetProcessLogsResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    process_pid_path: str,
    *,
    client: AuthenticatedClient | Client,
    process_pid_query: int | Unset = UNSET,
    process_tag: str | Unset = UNSET,
    after_seq: str | Unset = UNSET,
    page_size: int | Unset = UNSET,
    stream: ProcessServiceGetProcessLogsStream | Unset = UNSET,
) -> Response[GetProcessLogsResponse | Status]:
    """Reads a page of a process's kept output.

    Args:
        sandbox_id (str):
        process_pid_path (str):
        process_pid_query (int | Unset):
        process_tag (str | Unset):
        after_seq (str | Unset):
        page_size (int | Unset):
        stream (ProcessServiceGetProcessLogsStream | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetProcessLogsResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_pid_path=process_pid_path,
        process_pid_query=process_pid_query,
        process_tag=process_tag,
        after_seq=after_seq,
        page_size=page_size,
        stream=stream,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    process_pid_path: str,
    *,
    client: AuthenticatedClient | Client,
    process_pid_query: int | Unset = UNSET,
    process_tag: str | Unset = UNSET,
    after_seq: str | Unset = UNSET,
    page_size: int | Unset = UNSET,
    stream: ProcessServiceGetProcessLogsStream | Unset = UNSET,
) -> GetProcessLogsResponse | Status | None:
    """Reads a page of a process's kept output.

    Args:
        sandbox_id (str):
        process_pid_path (str):
        process_pid_query (int | Unset):
        process_tag (str | Unset):
        after_seq (str | Unset):
        page_size (int | Unset):
        stream (ProcessServiceGetProcessLogsStream | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetProcessLogsResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        process_pid_path=process_pid_path,
        client=client,
        process_pid_query=process_pid_query,
        process_tag=process_tag,
        after_seq=after_seq,
        page_size=page_size,
        stream=stream,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    process_pid_path: str,
    *,
    client: AuthenticatedClient | Client,
    process_pid_query: int | Unset = UNSET,
    process_tag: str | Unset = UNSET,
    after_seq: str | Unset = UNSET,
    page_size: int | Unset = UNSET,
    stream: ProcessServiceGetProcessLogsStream | Unset = UNSET,
) -> Response[GetProcessLogsResponse | Status]:
    """Reads a page of a process's kept output.

    Args:
        sandbox_id (str):
        process_pid_path (str):
        process_pid_query (int | Unset):
        process_tag (str | Unset):
        after_seq (str | Unset):
        page_size (int | Unset):
        stream (ProcessServiceGetProcessLogsStream | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetProcessLogsResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        process_pid_path=process_pid_path,
        process_pid_query=process_pid_query,
        process_tag=process_tag,
        after_seq=after_seq,
        page_size=page_size,
        stream=stream,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    process_pid_path: str,
    *,
    client: AuthenticatedClient | Client,
    process_pid_query: int | Unset = UNSET,
    process_tag: str | Unset = UNSET,
    after_seq: str | Unset = UNSET,
    page_size: int | Unset = UNSET,
    stream: ProcessServiceGetProcessLogsStream | Unset = UNSET,
) -> GetProcessLogsResponse | Status | None:
    """Reads a page of a process's kept output.

    Args:
        sandbox_id (str):
        process_pid_path (str):
        process_pid_query (int | Unset):
        process_tag (str | Unset):
        after_seq (str | Unset):
        page_size (int | Unset):
        stream (ProcessServiceGetProcessLogsStream | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetProcessLogsResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            process_pid_path=process_pid_path,
            client=client,
            process_pid_query=process_pid_query,
            process_tag=process_tag,
            after_seq=after_seq,
            page_size=page_size,
            stream=stream,
        )
    ).parsed
