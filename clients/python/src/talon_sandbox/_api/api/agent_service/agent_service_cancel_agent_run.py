from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...models.cancel_agent_run_request import CancelAgentRunRequest
from ...models.cancel_agent_run_response import CancelAgentRunResponse
from ...models.status import Status
from ...types import Response


def _get_kwargs(
    sandbox_id: str,
    run_id: str,
    *,
    body: CancelAgentRunRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sandboxes/{sandbox_id}/agent-runs/{run_id}:cancel".format(
            sandbox_id=quote(str(sandbox_id), safe=""),
            run_id=quote(str(run_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CancelAgentRunResponse | Status:
    if response.status_code == 200:
        response_200 = CancelAgentRunResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CancelAgentRunResponse | Status]:
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
    body: CancelAgentRunRequest,
) -> Response[CancelAgentRunResponse | Status]:
    """Stops a run: its process tree is killed, and it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        body (CancelAgentRunRequest): Request for CancelAgentRun.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CancelAgentRunResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        run_id=run_id,
        body=body,
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
    body: CancelAgentRunRequest,
) -> CancelAgentRunResponse | Status | None:
    """Stops a run: its process tree is killed, and it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        body (CancelAgentRunRequest): Request for CancelAgentRun.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CancelAgentRunResponse | Status
    """

    return sync_detailed(
        sandbox_id=sandbox_id,
        run_id=run_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelAgentRunRequest,
) -> Response[CancelAgentRunResponse | Status]:
    """Stops a run: its process tree is killed, and it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        body (CancelAgentRunRequest): Request for CancelAgentRun.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CancelAgentRunResponse | Status]
    """

    kwargs = _get_kwargs(
        sandbox_id=sandbox_id,
        run_id=run_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    sandbox_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelAgentRunRequest,
) -> CancelAgentRunResponse | Status | None:
    """Stops a run: its process tree is killed, and it completes.

    Args:
        sandbox_id (str):
        run_id (str):
        body (CancelAgentRunRequest): Request for CancelAgentRun.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CancelAgentRunResponse | Status
    """

    return (
        await asyncio_detailed(
            sandbox_id=sandbox_id,
            run_id=run_id,
            client=client,
            body=body,
        )
    ).parsed
