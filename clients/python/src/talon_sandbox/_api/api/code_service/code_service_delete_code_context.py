from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.delete_code_context_response import DeleteCodeContextResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    context_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/sandboxes/{sandbox_id}/code-contexts/{context_id}".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            context_id=quote(str(context_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeleteCodeContextResponse | Status:
    if response.status_code == 200:
        response_200 = DeleteCodeContextResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DeleteCodeContextResponse | Status]:
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
) -> Response[DeleteCodeContextResponse | Status]:
    """Stops a context's kernel and forgets it.

    Args:
        sandbox_id (str):
        context_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteCodeContextResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        context_id=context_id,
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
) -> DeleteCodeContextResponse | Status | None:
    """Stops a context's kernel and forgets it.

    Args:
        sandbox_id (str):
        context_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteCodeContextResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        context_id=context_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeleteCodeContextResponse | Status]:
    """Stops a context's kernel and forgets it.

    Args:
        sandbox_id (str):
        context_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeleteCodeContextResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        context_id=context_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    context_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> DeleteCodeContextResponse | Status | None:
    """Stops a context's kernel and forgets it.

    Args:
        sandbox_id (str):
        context_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeleteCodeContextResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            context_id=context_id,
            client=client,
        )
    ).parsed
