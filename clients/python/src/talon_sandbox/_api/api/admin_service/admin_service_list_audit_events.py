import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.list_audit_events_response import ListAuditEventsResponse
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    tenant_id: str | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    method: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    start_time: datetime.datetime | Unset = UNSET,
    end_time: datetime.datetime | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["pageSize"] = page_size

    params["pageToken"] = page_token

    params["tenantId"] = tenant_id

    params["actorId"] = actor_id

    params["method"] = method

    params["resourceId"] = resource_id

    json_start_time: str | Unset = UNSET
    if not isinstance(start_time, Unset):
        json_start_time = start_time.isoformat()
    params["startTime"] = json_start_time

    json_end_time: str | Unset = UNSET
    if not isinstance(end_time, Unset):
        json_end_time = end_time.isoformat()
    params["endTime"] = json_end_time

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/audit-events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListAuditEventsResponse | Status:
    if response.status_code == 200:
        response_200 = ListAuditEventsResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListAuditEventsResponse | Status]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    tenant_id: str | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    method: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    start_time: datetime.datetime | Unset = UNSET,
    end_time: datetime.datetime | Unset = UNSET,
) -> Response[ListAuditEventsResponse | Status]:
    """Queries the audit log, newest first.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        tenant_id (str | Unset):
        actor_id (str | Unset):
        method (str | Unset):
        resource_id (str | Unset):
        start_time (datetime.datetime | Unset):
        end_time (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListAuditEventsResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        tenant_id=tenant_id,
        actor_id=actor_id,
        method=method,
        resource_id=resource_id,
        start_time=start_time,
        end_time=end_time,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    tenant_id: str | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    method: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    start_time: datetime.datetime | Unset = UNSET,
    end_time: datetime.datetime | Unset = UNSET,
) -> ListAuditEventsResponse | Status | None:
    """Queries the audit log, newest first.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        tenant_id (str | Unset):
        actor_id (str | Unset):
        method (str | Unset):
        resource_id (str | Unset):
        start_time (datetime.datetime | Unset):
        end_time (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListAuditEventsResponse | Status
    """

    return sync_detailed(
        client=client,
        page_size=page_size,
        page_token=page_token,
        tenant_id=tenant_id,
        actor_id=actor_id,
        method=method,
        resource_id=resource_id,
        start_time=start_time,
        end_time=end_time,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    tenant_id: str | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    method: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    start_time: datetime.datetime | Unset = UNSET,
    end_time: datetime.datetime | Unset = UNSET,
) -> Response[ListAuditEventsResponse | Status]:
    """Queries the audit log, newest first.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        tenant_id (str | Unset):
        actor_id (str | Unset):
        method (str | Unset):
        resource_id (str | Unset):
        start_time (datetime.datetime | Unset):
        end_time (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListAuditEventsResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        tenant_id=tenant_id,
        actor_id=actor_id,
        method=method,
        resource_id=resource_id,
        start_time=start_time,
        end_time=end_time,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    tenant_id: str | Unset = UNSET,
    actor_id: str | Unset = UNSET,
    method: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    start_time: datetime.datetime | Unset = UNSET,
    end_time: datetime.datetime | Unset = UNSET,
) -> ListAuditEventsResponse | Status | None:
    """Queries the audit log, newest first.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        tenant_id (str | Unset):
        actor_id (str | Unset):
        method (str | Unset):
        resource_id (str | Unset):
        start_time (datetime.datetime | Unset):
        end_time (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListAuditEventsResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            page_size=page_size,
            page_token=page_token,
            tenant_id=tenant_id,
            actor_id=actor_id,
            method=method,
            resource_id=resource_id,
            start_time=start_time,
            end_time=end_time,
        )
    ).parsed
