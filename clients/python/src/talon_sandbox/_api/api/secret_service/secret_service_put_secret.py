from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.put_secret_request import PutSecretRequest
from ...models.put_secret_response import PutSecretResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: PutSecretRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/secrets/{name}".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PutSecretResponse | Status:
    if response.status_code == 200:
        response_200 = PutSecretResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[PutSecretResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: PutSecretRequest,
) -> Response[PutSecretResponse | Status]:
    """Creates or replaces a secret; a new value reaches the running
     sandboxes that name it (docs/security.md, Secrets).

    Args:
        name (str):
        body (PutSecretRequest): Request for PutSecret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PutSecretResponse | Status]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: PutSecretRequest,
) -> PutSecretResponse | Status | None:
    """Creates or replaces a secret; a new value reaches the running
     sandboxes that name it (docs/security.md, Secrets).

    Args:
        name (str):
        body (PutSecretRequest): Request for PutSecret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PutSecretResponse | Status
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: PutSecretRequest,
) -> Response[PutSecretResponse | Status]:
    """Creates or replaces a secret; a new value reaches the running
     sandboxes that name it (docs/security.md, Secrets).

    Args:
        name (str):
        body (PutSecretRequest): Request for PutSecret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PutSecretResponse | Status]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: PutSecretRequest,
) -> PutSecretResponse | Status | None:
    """Creates or replaces a secret; a new value reaches the running
     sandboxes that name it (docs/security.md, Secrets).

    Args:
        name (str):
        body (PutSecretRequest): Request for PutSecret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PutSecretResponse | Status
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
