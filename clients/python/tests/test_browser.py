"""The sandbox's browser through the Python SDK against a live `talon up`:
started, driven by the unmodified Playwright through `cdp_url`, a
screenshot, the live view page, and stopped; the async client the same."""

import asyncio
import os
import time

import httpx
import pytest

from talon_sandbox import AsyncSandbox, Sandbox

pytestmark = pytest.mark.skipif(
    not os.environ.get("TALON_API_KEY"), reason="needs a live server: TALON_URL and TALON_API_KEY"
)

PNG = b"\x89PNG\r\n\x1a\n"


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed")
    return sync_playwright


def test_playwright_drives_the_sandbox_browser_through_cdp_url():
    sync_playwright = _playwright()
    with Sandbox.create(memory_mib=1024, timeout=600) as sbx:
        # A site served inside the same sandbox, on its loopback.
        sbx.files.write("site/index.html", "<title>served in the sandbox</title><p>hi</p>")
        sbx.commands.run("python3 -m http.server 8123 --bind 127.0.0.1 --directory /workspace/site",
                         background=True)
        info = sbx.browser.start(window_size="1024,700")
        assert info.state == "running", info
        assert info.cdp_url.startswith(os.environ["TALON_URL"].rstrip("/") + "/cdp/")
        assert "127.0.0.1:9222" not in info.websocket_debugger_url
        with sync_playwright() as p:
            browser = p.chromium.connect_over_cdp(info.cdp_url)
            ctx = browser.contexts[0]
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            for _ in range(50):
                try:
                    page.goto("http://127.0.0.1:8123/")
                    break
                except Exception:
                    time.sleep(0.2)
            assert page.title() == "served in the sandbox"
            page.set_content("<title>sdk</title><h1 id=t>before</h1>"
                             "<button onclick=\"t.textContent='after'\">go</button>")
            page.click("button")
            assert page.inner_text("#t") == "after"
            # Our screenshot sees what Playwright did.
            png = sbx.browser.screenshot()
            assert png.startswith(PNG) and len(png) > 1000
            assert sbx.browser.screenshot(full_page=True).startswith(PNG)
            browser.close()
        live = httpx.get(info.live_view_url)
        assert live.status_code == 200 and "startScreencast" in live.text
        again = sbx.browser.get()
        assert again.state == "running" and again.pid == info.pid and again.cdp_url
        stopped = sbx.browser.stop()
        assert stopped.state == "stopped" and not stopped.cdp_url
        assert httpx.get(info.cdp_url + "/json/version").status_code >= 500


def test_async_browser_start_screenshot_stop():
    async def main():
        async with await AsyncSandbox.create(memory_mib=1024, timeout=600) as sbx:
            info = await sbx.browser.start()
            assert info.state == "running" and info.window_size == "1280,720"
            assert (await sbx.browser.screenshot()).startswith(PNG)
            assert (await sbx.browser.stop()).state == "stopped"
            with pytest.raises(Exception) as e:
                await sbx.browser.screenshot()
            assert "not running" in str(e.value)
            with pytest.raises(Exception) as e:
                await sbx.browser.start(window_size="1,1")
            assert "window_size" in str(e.value)

    asyncio.run(main())
