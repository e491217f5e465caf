from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.change_password_request import ChangePasswordRequest
from ...models.change_password_response import ChangePasswordResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    *,
    body: ChangePasswordRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/auth/password",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChangePasswordResponse | Status:
    if response.status_code == 200:
        response_200 = ChangePasswordResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ChangePasswordResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ChangePasswordRequest,
) -> Response[ChangePasswordResponse | Status]:
    """Changes the signed-in user's own password, given the current one
     (failures count toward the sign-in throttle). Every session of the
     old password ends: its refresh tokens are revoked, and its access
     tokens and browser sessions, which carry the password's fingerprint,
     are refused.

    Args:
        body (ChangePasswordRequest): Request for ChangePassword.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChangePasswordResponse | Status]
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
    body: ChangePasswordRequest,
) -> ChangePasswordResponse | Status | None:
    """Changes the signed-in user's own password, given the current one
     (failures count toward the sign-in throttle). Every session of the
     old password ends: its refresh tokens are revoked, and its access
     tokens and browser sessions, which carry the password's fingerprint,
     are refused.

    Args:
        body (ChangePasswordRequest): Request for ChangePassword.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChangePasswordResponse | Status
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ChangePasswordRequest,
) -> Response[ChangePasswordResponse | Status]:
    """Changes the signed-in user's own password, given the current one
     (failures count toward the sign-in throttle). Every session of the
     old password ends: its refresh tokens are revoked, and its access
     tokens and browser sessions, which carry the password's fingerprint,
     are refused.

    Args:
        body (ChangePasswordRequest): Request for ChangePassword.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChangePasswordResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ChangePasswordRequest,
) -> ChangePasswordResponse | Status | None:
    """Changes the signed-in user's own password, given the current one
     (failures count toward the sign-in throttle). Every session of the
     old password ends: its refresh tokens are revoked, and its access
     tokens and browser sessions, which carry the password's fingerprint,
     are refused.

    Args:
        body (ChangePasswordRequest): Request for ChangePassword.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChangePasswordResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
