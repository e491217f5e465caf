from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.restart_code_context_request import RestartCodeContextRequest
from ...models.restart_code_context_response import RestartCodeContextResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    context_id: str,
    *,
    body: RestartCodeContextRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/code-contexts/{context_id}:restart".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            context_id=quote(str(context_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> RestartCodeContextResponse | Status:
    if response.status_code == 200:
        response_200 = RestartCodeContextResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[RestartCodeContextResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: RestartCodeContextRequest,
) -> Response[RestartCodeContextResponse | Status]:
    """Starts a context's kernel afresh: its state is gone, its id stays.

    Args:
        sandbox_id (str):
        context_id (str):
        body (RestartCodeContextRequest): Request for RestartCodeContext.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RestartCodeContextResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        context_id=context_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: RestartCodeContextRequest,
) -> RestartCodeContextResponse | Status | None:
    """Starts a context's kernel afresh: its state is gone, its id stays.

    Args:
        sandbox_id (str):
        context_id (str):
        body (RestartCodeContextRequest): Request for RestartCodeContext.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RestartCodeContextResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        context_id=context_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: RestartCodeContextRequest,
) -> Response[RestartCodeContextResponse | Status]:
    """Starts a context's kernel afresh: its state is gone, its id stays.

    Args:
        sandbox_id (str):
        context_id (str):
        body (RestartCodeContextRequest): Request for RestartCodeContext.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RestartCodeContextResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        context_id=context_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: RestartCodeContextRequest,
) -> RestartCodeContextResponse | Status | None:
    """Starts a context's kernel afresh: its state is gone, its id stays.

    Args:
        sandbox_id (str):
        context_id (str):
        body (RestartCodeContextRequest): Request for RestartCodeContext.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RestartCodeContextResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            context_id=context_id,
            client=client,
            body=body,
        )
    ).parsed
