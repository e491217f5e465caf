"""What the sync and async SDKs share: configuration, the REST paths and
bodies of the calls they make, and the parsing of responses and stream
lines. Unary calls go through the generated layer (`_api`, made by
openapi-python-client from the OpenAPI document); streams (NDJSON lines)
and raw uploads and downloads go through its httpx client directly.

It is split by concern, one module each: `_transport` (`Config`, its
clients and their transport), `_models` (the dataclasses calls return),
`_wire` (paths, bodies, checking answers) and `_streams` (stream lines and
the followers that fold them). This module gathers them back under the one
name the SDK uses (`core.X`) and callers import from
(`talon_sandbox._core.Config`)."""

from __future__ import annotations

# None of the names imported below is used here: together they are the
# names this module had before the split (the standard library's and httpx
# too), kept so imports from it still work.
import asyncio
import base64
import importlib.util
import ipaddress
import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import quote

import httpx

from . import errors
from ._api.client import AuthenticatedClient
from ._models import (
    AgentEvent,
    AgentRun,
    BrowserInfo,
    CodeContext,
    CodeError,
    CodeResult,
    CommandResult,
    Execution,
    FileInfo,
    FilesystemEvent,
    SandboxInfo,
    SandboxMetrics,
    SnapshotInfo,
    WriteEntry,
)
from ._streams import AgentFollower, CodeFollower, Collector, Event, agent_event, event_of, fs_event
from ._transport import (
    _ASYNC_CLIENTS,
    _CLIENTS,
    _CLIENTS_LOCK,
    DEFAULT_URL,
    Config,
    _AsyncTransport,
    _Servers,
    _Transport,
    _unreachable,
)
from ._wire import (
    DEFAULT_COMMAND_TIMEOUT,
    ISOLATIONS,
    LANGUAGES,
    STATES,
    agent_body,
    argv,
    browser_info,
    browser_start_body,
    check,
    code_context,
    code_language,
    connectable,
    context_body,
    context_id,
    create_body,
    either,
    finish,
    list_params,
    network_policy,
    not_json,
    page,
    page_params,
    parsed,
    preview_link,
    preview_url,
    process_body,
    process_path,
    run_code_body,
    sandbox_path,
    screenshot_png,
    with_ttl,
)
