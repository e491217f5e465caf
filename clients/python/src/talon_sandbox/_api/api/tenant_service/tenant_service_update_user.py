from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...models.update_user_request import UpdateUserRequest
from ...models.update_user_response import UpdateUserResponse
from ...types import Response


def _get_kwargs(
    tenant_id: str,
    user_id: str,
    *,
    body: UpdateUserRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/tenants/{tenant_id}/users/{user_id}".format(
            tenant_id=quote(str(tenant_id), safe=""),
            user_id=quote(str(user_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Status | UpdateUserResponse:
    if response.status_code == 200:
        response_200 = UpdateUserResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | UpdateUserResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant_id: str,
    user_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: UpdateUserRequest,
) -> Response[Status | UpdateUserResponse]:
    """Changes a user's role or disables the user. The last owner of a tenant
     can be neither demoted nor disabled.

    Args:
        tenant_id (str):
        user_id (str):
        body (UpdateUserRequest): Request for UpdateUser. Unset fields are left as they are.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | UpdateUserResponse]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        user_id=user_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    tenant_id: str,
    user_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: UpdateUserRequest,
) -> Status | UpdateUserResponse | None:
    """Changes a user's role or disables the user. The last owner of a tenant
     can be neither demoted nor disabled.

    Args:
        tenant_id (str):
        user_id (str):
        body (UpdateUserRequest): Request for UpdateUser. Unset fields are left as they are.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | UpdateUserResponse
    """

    return sync_detailed(
        tenant_id=tenant_id,
        user_id=user_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    tenant_id: str,
    user_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: UpdateUserRequest,
) -> Response[Status | UpdateUserResponse]:
    """Changes a user's role or disables the user. The last owner of a tenant
     can be neither demoted nor disabled.

    Args:
        tenant_id (str):
        user_id (str):
        body (UpdateUserRequest): Request for UpdateUser. Unset fields are left as they are.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | UpdateUserResponse]
    """

    kwargs = _get_kwargs(
        tenant_id=tenant_id,
        user_id=user_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    tenant_id: str,
    user_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: UpdateUserRequest,
) -> Status | UpdateUserResponse | None:
    """Changes a user's role or disables the user. The last owner of a tenant
     can be neither demoted nor disabled.

    Args:
        tenant_id (str):
        user_id (str):
        body (UpdateUserRequest): Request for UpdateUser. Unset fields are left as they are.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | UpdateUserResponse
    """

    return (
        await asyncio_detailed(
            tenant_id=tenant_id,
            user_id=user_id,
            client=client,
            body=body,
        )
    ).parsed
