from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...models.write_file_request import WriteFileRequest
from ...models.write_file_response import WriteFileResponse
from ...types import UNSET, Response


def _get_kwargs(
    sandbox_id: str,
    *,
    body: list[WriteFileRequest] | WriteFileRequest | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/files:write".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
    }

    if isinstance(body, list[WriteFileRequest] | WriteFileRequest):
        if isinstance(body, WriteFileRequest):
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
) -> Status | WriteFileResponse:
    if response.status_code == 200:
        response_200 = WriteFileResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | WriteFileResponse]:
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
    body: list[WriteFileRequest] | WriteFileRequest | str | Unset = UNSET,
) -> Response[Status | WriteFileResponse]:
    """Writes a file atomically: a temp file, fsync, then rename. The first
     message carries the header, then data, then the finish (with the byte
     count); without the finish nothing is written. Over REST, a raw
     `application/octet-stream` body is the data, and the gateway sends the
     finish when the body is complete.

    Args:
        sandbox_id (str):
        body (list[WriteFileRequest] | WriteFileRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | WriteFileResponse]
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
    body: list[WriteFileRequest] | WriteFileRequest | str | Unset = UNSET,
) -> Status | WriteFileResponse | None:
    """Writes a file atomically: a temp file, fsync, then rename. The first
     message carries the header, then data, then the finish (with the byte
     count); without the finish nothing is written. Over REST, a raw
     `application/octet-stream` body is the data, and the gateway sends the
     finish when the body is complete.

    Args:
        sandbox_id (str):
        body (list[WriteFileRequest] | WriteFileRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | WriteFileResponse
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
    body: list[WriteFileRequest] | WriteFileRequest | str | Unset = UNSET,
) -> Response[Status | WriteFileResponse]:
    """Writes a file atomically: a temp file, fsync, then rename. The first
     message carries the header, then data, then the finish (with the byte
     count); without the finish nothing is written. Over REST, a raw
     `application/octet-stream` body is the data, and the gateway sends the
     finish when the body is complete.

    Args:
        sandbox_id (str):
        body (list[WriteFileRequest] | WriteFileRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | WriteFileResponse]
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
    body: list[WriteFileRequest] | WriteFileRequest | str | Unset = UNSET,
) -> Status | WriteFileResponse | None:
    """Writes a file atomically: a temp file, fsync, then rename. The first
     message carries the header, then data, then the finish (with the byte
     count); without the finish nothing is written. Over REST, a raw
     `application/octet-stream` body is the data, and the gateway sends the
     finish when the body is complete.

    Args:
        sandbox_id (str):
        body (list[WriteFileRequest] | WriteFileRequest):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | WriteFileResponse
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            body=body,
        )
    ).parsed
