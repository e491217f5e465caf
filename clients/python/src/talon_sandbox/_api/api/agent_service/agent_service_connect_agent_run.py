from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    sandbox_id: str,
    run_id: str,
    *,
    after_seq: str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["afterSeq"] = after_seq

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes/{sandbox_id}/agent-runs/{run_id}:connect".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Status | str:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Status | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: str | Unset = UNSET,
) -> Response[Status | str]:
    """Streams a run's events after `after_seq` (all of them from 0), then
     follows it until it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        after_seq (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        run_id=run_id,
        after_seq=after_seq,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: str | Unset = UNSET,
) -> Status | str | None:
    """Streams a run's events after `after_seq` (all of them from 0), then
     follows it until it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        after_seq (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        run_id=run_id,
        client=client,
        after_seq=after_seq,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: str | Unset = UNSET,
) -> Response[Status | str]:
    """Streams a run's events after `after_seq` (all of them from 0), then
     follows it until it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        after_seq (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Status | str]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        run_id=run_id,
        after_seq=after_seq,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: str | Unset = UNSET,
) -> Status | str | None:
    """Streams a run's events after `after_seq` (all of them from 0), then
     follows it until it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        after_seq (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Status | str
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            run_id=run_id,
            client=client,
            after_seq=after_seq,
        )
    ).parsed
