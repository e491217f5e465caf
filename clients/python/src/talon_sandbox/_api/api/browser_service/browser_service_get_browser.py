from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.get_browser_response import GetBrowserResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    *,
    url_ttl: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["urlTtl"] = url_ttl

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/browser".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> GetBrowserResponse | Status:
    if response.status_code == 200:
        response_200 = GetBrowserResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[GetBrowserResponse | Status]:
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
    url_ttl: str | Unset = UNSET,
) -> Response[GetBrowserResponse | Status]:
    """Describes the browser.

    Args:
        sandbox_id (str):
        url_ttl (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetBrowserResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        url_ttl=url_ttl,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    url_ttl: str | Unset = UNSET,
) -> GetBrowserResponse | Status | None:
    """Describes the browser.

    Args:
        sandbox_id (str):
        url_ttl (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetBrowserResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        client=client,
        url_ttl=url_ttl,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    url_ttl: str | Unset = UNSET,
) -> Response[GetBrowserResponse | Status]:
    """Describes the browser.

    Args:
        sandbox_id (str):
        url_ttl (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetBrowserResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        url_ttl=url_ttl,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    *,
    client: AuthenticatedClient | Client,
    url_ttl: str | Unset = UNSET,
) -> GetBrowserResponse | Status | None:
    """Describes the browser.

    Args:
        sandbox_id (str):
        url_ttl (str | Unset): Represents a a duration between -315,576,000,000s and
            315,576,000,000s (around 10000 years). Precision is in nanoseconds. 1 nanosecond is
            represented as 0.000000001s

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetBrowserResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            client=client,
            url_ttl=url_ttl,
        )
    ).parsed
