from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.import_image_request import ImportImageRequest
from ...models.import_image_response import ImportImageResponse
from ...models.status import Status
from ...types import UNSET, Response


def _get_kwargs(
    *,
    body: ImportImageRequest | list[ImportImageRequest] | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/images:import",
    }

    if isinstance(body, ImportImageRequest | list[ImportImageRequest]):
        if isinstance(body, ImportImageRequest):
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
) -> ImportImageResponse | Status:
    if response.status_code == 200:
        response_200 = ImportImageResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ImportImageResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ImportImageRequest | list[ImportImageRequest] | str | Unset = UNSET,
) -> Response[ImportImageResponse | Status]:
    """Imports an OCI layout or `docker save` archive, from a path on the
     worker or uploaded in chunks after the header.

    Args:
        body (ImportImageRequest | list[ImportImageRequest]):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ImportImageResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: ImportImageRequest | list[ImportImageRequest] | str | Unset = UNSET,
) -> ImportImageResponse | Status | None:
    """Imports an OCI layout or `docker save` archive, from a path on the
     worker or uploaded in chunks after the header.

    Args:
        body (ImportImageRequest | list[ImportImageRequest]):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ImportImageResponse | Status
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ImportImageRequest | list[ImportImageRequest] | str | Unset = UNSET,
) -> Response[ImportImageResponse | Status]:
    """Imports an OCI layout or `docker save` archive, from a path on the
     worker or uploaded in chunks after the header.

    Args:
        body (ImportImageRequest | list[ImportImageRequest]):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ImportImageResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ImportImageRequest | list[ImportImageRequest] | str | Unset = UNSET,
) -> ImportImageResponse | Status | None:
    """Imports an OCI layout or `docker save` archive, from a path on the
     worker or uploaded in chunks after the header.

    Args:
        body (ImportImageRequest | list[ImportImageRequest]):
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ImportImageResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
