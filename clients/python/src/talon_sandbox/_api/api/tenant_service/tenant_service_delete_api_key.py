from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.delete_api_key_response import DeleteApiKeyResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    tenant_id: str,
    api_key_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/tenants/{tenant_id}/api-keys/{api_key_id}".format(
            tenant_id=quote(str(tenant_id), safe=""),
            api_key_id=quote(str(api_key_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeleteApiKeyResponse | Status:
    if response.status_code == 200:
        response_200 = DeleteApiKeyResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DeleteApiKeyResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant_id: str,
    api_key_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeleteApiKeyResponse | Status]:
    """Revokes an API key: any of the tenant's for owners, the caller's own
     otherwise.

    Args:
        tenant_id (str):
        api_key_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteApiKeyResponse | Status]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        api_key_id=api_key_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    tenant_id: str,
    api_key_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> DeleteApiKeyResponse | Status | None:
    """Revokes an API key: any of the tenant's for owners, the caller's own
     otherwise.

    Args:
        tenant_id (str):
        api_key_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteApiKeyResponse | Status
    """

    return sync_detailed(
        tenant_id=tenant_id,
        api_key_id=api_key_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    tenant_id: str,
    api_key_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeleteApiKeyResponse | Status]:
    """Revokes an API key: any of the tenant's for owners, the caller's own
     otherwise.

    Args:
        tenant_id (str):
        api_key_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteApiKeyResponse | Status]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        api_key_id=api_key_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    tenant_id: str,
    api_key_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> DeleteApiKeyResponse | Status | None:
    """Revokes an API key: any of the tenant's for owners, the caller's own
     otherwise.

    Args:
        tenant_id (str):
        api_key_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteApiKeyResponse | Status
    """

    return (
        await asyncio_detailed(
            tenant_id=tenant_id,
            api_key_id=api_key_id,
            client=client,
        )
    ).parsed
