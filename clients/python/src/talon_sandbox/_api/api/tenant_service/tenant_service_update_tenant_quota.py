from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.quota import Quota
from ...models.status import Status
from ...models.update_tenant_quota_response import UpdateTenantQuotaResponse
from ...types import Response


def _get_kwargs(
    tenant_id: str,
    *,
    body: Quota,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/tenants/{tenant_id}/quota".format(
            tenant_id=quote(str(tenant_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Status | UpdateTenantQuotaResponse:
    if response.status_code == 200:
        response_200 = UpdateTenantQuotaResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | UpdateTenantQuotaResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Quota,
) -> Response[Status | UpdateTenantQuotaResponse]:
    """Sets a tenant's quota. Platform admins only.

    Args:
        tenant_id (str):
        body (Quota): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | UpdateTenantQuotaResponse]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Quota,
) -> Status | UpdateTenantQuotaResponse | None:
    """Sets a tenant's quota. Platform admins only.

    Args:
        tenant_id (str):
        body (Quota): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | UpdateTenantQuotaResponse
    """

    return sync_detailed(
        tenant_id=tenant_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Quota,
) -> Response[Status | UpdateTenantQuotaResponse]:
    """Sets a tenant's quota. Platform admins only.

    Args:
        tenant_id (str):
        body (Quota): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | UpdateTenantQuotaResponse]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    tenant_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Quota,
) -> Status | UpdateTenantQuotaResponse | None:
    """Sets a tenant's quota. Platform admins only.

    Args:
        tenant_id (str):
        body (Quota): Limits on what one tenant may hold at once. Zero means no sandboxes (or
             no cpu, no memory) at all; there is no "unlimited".

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | UpdateTenantQuotaResponse
    """

    return (
        await asyncio_detailed(
            tenant_id=tenant_id,
            client=client,
            body=body,
        )
    ).parsed
