package talon

// The sandbox's browser: Chromium, headless, its profile in the
// workspace, driven through the gateway by any CDP client
// (chromedp, Playwright, Puppeteer).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
)

// BrowserInfo describes the sandbox's browser. CDPURL is what Playwright's
// connectOverCDP takes; WebSocketDebuggerURL is the browser target's
// WebSocket (Puppeteer's browserWSEndpoint, chromedp's remote allocator);
// LiveViewURL is a page that shows the screen as it changes. The URLs
// carry a token that expires at ExpireTime (Get gives fresh ones) and are
// empty unless the browser runs and the caller may drive it. State is
// "starting", "running", "stopped" or "crashed" (Error then says how).
type BrowserInfo struct {
	State                string
	CDPURL               string
	WebSocketDebuggerURL string
	LiveViewURL          string
	ExpireTime           string
	PID                  int
	WindowSize           string
	Error                string
}

// BrowserOptions are StartBrowser's: WindowSize "W,H" (1280,720 when
// empty) and URLTTLSeconds, how long the URLs' token lasts (1 h when 0).
type BrowserOptions struct {
	WindowSize    string
	URLTTLSeconds float64
}

// Browser is the sandbox's browser.
type Browser struct{ s *Sandbox }

// Browser gives the sandbox's browser.
func (s *Sandbox) Browser() *Browser { return &Browser{s} }

func (b *Browser) call(ctx context.Context, method, rest string, body any) (json.RawMessage, error) {
	var rd io.Reader
	hdr := map[string]string{}
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = strings.NewReader(string(j))
		hdr["Content-Type"] = "application/json"
	}
	resp, err := b.s.c.do(ctx, method, b.s.path(rest), rd, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return out, err
}

func browserInfo(raw json.RawMessage) (BrowserInfo, error) {
	var r struct {
		Browser struct {
			State                string `json:"state"`
			CdpURL               string `json:"cdpUrl"`
			WebsocketDebuggerURL string `json:"websocketDebuggerUrl"`
			LiveViewURL          string `json:"liveViewUrl"`
			ExpireTime           string `json:"expireTime"`
			PID                  int    `json:"pid"`
			WindowSize           string `json:"windowSize"`
			Error                string `json:"error"`
		} `json:"browser"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return BrowserInfo{}, err
	}
	b := r.Browser
	state := strings.ToLower(strings.TrimPrefix(b.State, "BROWSER_STATE_"))
	if state == "" {
		state = "stopped"
	}
	return BrowserInfo{State: state, CDPURL: b.CdpURL, WebSocketDebuggerURL: b.WebsocketDebuggerURL,
		LiveViewURL: b.LiveViewURL, ExpireTime: b.ExpireTime, PID: b.PID, WindowSize: b.WindowSize,
		Error: b.Error}, nil
}

// Start starts the browser (or returns the running one) once its DevTools
// answer.
func (b *Browser) Start(ctx context.Context, o BrowserOptions) (BrowserInfo, error) {
	body := map[string]any{}
	if o.WindowSize != "" {
		body["windowSize"] = o.WindowSize
	}
	if o.URLTTLSeconds > 0 {
		body["urlTtl"] = seconds(o.URLTTLSeconds)
	}
	raw, err := b.call(ctx, "POST", "/browser:start", body)
	if err != nil {
		return BrowserInfo{}, err
	}
	return browserInfo(raw)
}

// Get gives the browser's state, with fresh URLs when it runs.
func (b *Browser) Get(ctx context.Context) (BrowserInfo, error) {
	raw, err := b.call(ctx, "GET", "/browser", nil)
	if err != nil {
		return BrowserInfo{}, err
	}
	return browserInfo(raw)
}

// Stop stops it, letting it write its profile out first.
func (b *Browser) Stop(ctx context.Context) (BrowserInfo, error) {
	raw, err := b.call(ctx, "POST", "/browser:stop", map[string]any{})
	if err != nil {
		return BrowserInfo{}, err
	}
	return browserInfo(raw)
}

// Screenshot gives a PNG of the active page (the whole page when
// fullPage).
func (b *Browser) Screenshot(ctx context.Context, fullPage bool) ([]byte, error) {
	rest := "/browser/screenshot"
	if fullPage {
		rest += "?fullPage=true"
	}
	raw, err := b.call(ctx, "GET", rest, nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		PNG string `json:"png"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.PNG)
}
