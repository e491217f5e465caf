from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...models.take_screenshot_response import TakeScreenshotResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    *,
    full_page: bool | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["fullPage"] = full_page

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/browser/screenshot".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Status | TakeScreenshotResponse:
    if response.status_code == 200:
        response_200 = TakeScreenshotResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | TakeScreenshotResponse]:
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
    full_page: bool | Unset = UNSET,
) -> Response[Status | TakeScreenshotResponse]:
    """A PNG of the browser's active page (the first page target).

    Args:
        sandbox_id (str):
        full_page (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | TakeScreenshotResponse]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        full_page=full_page,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    full_page: bool | Unset = UNSET,
) -> Status | TakeScreenshotResponse | None:
    """A PNG of the browser's active page (the first page target).

    Args:
        sandbox_id (str):
        full_page (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | TakeScreenshotResponse
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        full_page=full_page,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    full_page: bool | Unset = UNSET,
) -> Response[Status | TakeScreenshotResponse]:
    """A PNG of the browser's active page (the first page target).

    Args:
        sandbox_id (str):
        full_page (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | TakeScreenshotResponse]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        full_page=full_page,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    full_page: bool | Unset = UNSET,
) -> Status | TakeScreenshotResponse | None:
    """A PNG of the browser's active page (the first page target).

    Args:
        sandbox_id (str):
        full_page (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | TakeScreenshotResponse
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            full_page=full_page,
        )
    ).parsed
