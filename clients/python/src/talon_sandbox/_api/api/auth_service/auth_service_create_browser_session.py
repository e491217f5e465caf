from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.create_browser_session_request import CreateBrowserSessionRequest
from ...models.create_browser_session_response import CreateBrowserSessionResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    *,
    body: CreateBrowserSessionRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/auth/browser-session",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreateBrowserSessionResponse | Status:
    if response.status_code == 200:
        response_200 = CreateBrowserSessionResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreateBrowserSessionResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateBrowserSessionRequest,
) -> Response[CreateBrowserSessionResponse | Status]:
    """Starts a browser session from an email and password. Over REST the
     gateway puts the session into a `__Host-talon-session` cookie
     (HttpOnly, Secure, SameSite=Lax) and blanks `session_token` in the
     body; every state-changing call authenticated by that cookie must then
     carry `csrf_token` in an `X-CSRF-Token` header, and a foreign `Origin`
     is refused. Unauthenticated.

    Args:
        body (CreateBrowserSessionRequest): Request for CreateBrowserSession.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateBrowserSessionResponse | Status]
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
    body: CreateBrowserSessionRequest,
) -> CreateBrowserSessionResponse | Status | None:
    """Starts a browser session from an email and password. Over REST the
     gateway puts the session into a `__Host-talon-session` cookie
     (HttpOnly, Secure, SameSite=Lax) and blanks `session_token` in the
     body; every state-changing call authenticated by that cookie must then
     carry `csrf_token` in an `X-CSRF-Token` header, and a foreign `Origin`
     is refused. Unauthenticated.

    Args:
        body (CreateBrowserSessionRequest): Request for CreateBrowserSession.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateBrowserSessionResponse | Status
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateBrowserSessionRequest,
) -> Response[CreateBrowserSessionResponse | Status]:
    """Starts a browser session from an email and password. Over REST the
     gateway puts the session into a `__Host-talon-session` cookie
     (HttpOnly, Secure, SameSite=Lax) and blanks `session_token` in the
     body; every state-changing call authenticated by that cookie must then
     carry `csrf_token` in an `X-CSRF-Token` header, and a foreign `Origin`
     is refused. Unauthenticated.

    Args:
        body (CreateBrowserSessionRequest): Request for CreateBrowserSession.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreateBrowserSessionResponse | Status]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CreateBrowserSessionRequest,
) -> CreateBrowserSessionResponse | Status | None:
    """Starts a browser session from an email and password. Over REST the
     gateway puts the session into a `__Host-talon-session` cookie
     (HttpOnly, Secure, SameSite=Lax) and blanks `session_token` in the
     body; every state-changing call authenticated by that cookie must then
     carry `csrf_token` in an `X-CSRF-Token` header, and a foreign `Origin`
     is refused. Unauthenticated.

    Args:
        body (CreateBrowserSessionRequest): Request for CreateBrowserSession.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreateBrowserSessionResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
