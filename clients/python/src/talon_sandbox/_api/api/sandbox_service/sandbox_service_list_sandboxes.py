from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...models.list_sandboxes_response import ListSandboxesResponse
from ...models.sandbox_service_list_sandboxes_metadata import (
    SandboxServiceListSandboxesMetadata,
)
from ...models.sandbox_service_list_sandboxes_states_item import (
    SandboxServiceListSandboxesStatesItem,
)
from ...models.status import Status
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    label_selector: str | Unset = UNSET,
    states: list[SandboxServiceListSandboxesStatesItem] | Unset = UNSET,
    metadata: SandboxServiceListSandboxesMetadata | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["pageSize"] = page_size

    params["pageToken"] = page_token

    params["labelSelector"] = label_selector

    json_states: list[str] | Unset = UNSET
    if not isinstance(states, Unset):
        json_states = []
        for states_item_data in states:
            states_item = states_item_data.value
            json_states.append(states_item)

    params["states"] = json_states

    json_metadata: dict[str, Any] | Unset = UNSET
    if not isinstance(metadata, Unset):
        json_metadata = metadata.to_dict()
    if not isinstance(json_metadata, Unset):
        params.update(json_metadata)

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sandboxes",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListSandboxesResponse | Status:
    if response.status_code == 200:
        response_200 = ListSandboxesResponse.from_dict(response.json())

        return response_200

    response_default = Status.from_dict(response.json())

    return response_default


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListSandboxesResponse | Status]:
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
    label_selector: str | Unset = UNSET,
    states: list[SandboxServiceListSandboxesStatesItem] | Unset = UNSET,
    metadata: SandboxServiceListSandboxesMetadata | Unset = UNSET,
) -> Response[ListSandboxesResponse | Status]:
    """Lists the tenant's sandboxes, newest first, paged, with a label filter.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        label_selector (str | Unset):
        states (list[SandboxServiceListSandboxesStatesItem] | Unset):
        metadata (SandboxServiceListSandboxesMetadata | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListSandboxesResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        label_selector=label_selector,
        states=states,
        metadata=metadata,
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
    label_selector: str | Unset = UNSET,
    states: list[SandboxServiceListSandboxesStatesItem] | Unset = UNSET,
    metadata: SandboxServiceListSandboxesMetadata | Unset = UNSET,
) -> ListSandboxesResponse | Status | None:
    """Lists the tenant's sandboxes, newest first, paged, with a label filter.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        label_selector (str | Unset):
        states (list[SandboxServiceListSandboxesStatesItem] | Unset):
        metadata (SandboxServiceListSandboxesMetadata | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListSandboxesResponse | Status
    """

    return sync_detailed(
        client=client,
        page_size=page_size,
        page_token=page_token,
        label_selector=label_selector,
        states=states,
        metadata=metadata,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    label_selector: str | Unset = UNSET,
    states: list[SandboxServiceListSandboxesStatesItem] | Unset = UNSET,
    metadata: SandboxServiceListSandboxesMetadata | Unset = UNSET,
) -> Response[ListSandboxesResponse | Status]:
    """Lists the tenant's sandboxes, newest first, paged, with a label filter.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        label_selector (str | Unset):
        states (list[SandboxServiceListSandboxesStatesItem] | Unset):
        metadata (SandboxServiceListSandboxesMetadata | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListSandboxesResponse | Status]
    """

    kwargs = _get_kwargs(
        page_size=page_size,
        page_token=page_token,
        label_selector=label_selector,
        states=states,
        metadata=metadata,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    page_size: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    label_selector: str | Unset = UNSET,
    states: list[SandboxServiceListSandboxesStatesItem] | Unset = UNSET,
    metadata: SandboxServiceListSandboxesMetadata | Unset = UNSET,
) -> ListSandboxesResponse | Status | None:
    """Lists the tenant's sandboxes, newest first, paged, with a label filter.

    Args:
        page_size (int | Unset):
        page_token (str | Unset):
        label_selector (str | Unset):
        states (list[SandboxServiceListSandboxesStatesItem] | Unset):
        metadata (SandboxServiceListSandboxesMetadata | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListSandboxesResponse | Status
    """

    return (
        await asyncio_detailed(
            client=client,
            page_size=page_size,
            page_token=page_token,
            label_selector=label_selector,
            states=states,
            metadata=metadata,
        )
    ).parsed
