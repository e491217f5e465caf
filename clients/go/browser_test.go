// The sandbox's browser through the Go SDK against a live `talon up`.
package talon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func TestBrowserStartScreenshotStop(t *testing.T) {
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Create(ctx, talon.CreateOptions{Template: "host", MemoryMiB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), s.ID())
	if _, err := s.Browser().Start(ctx, talon.BrowserOptions{WindowSize: "5,5"}); err == nil ||
		!strings.Contains(err.Error(), "window_size") {
		t.Fatalf("a bad window size: %v", err)
	}
	b, err := s.Browser().Start(ctx, talon.BrowserOptions{WindowSize: "800,600"})
	if err != nil {
		t.Fatal(err)
	}
	if b.State != "running" || b.WindowSize != "800,600" || !strings.Contains(b.CDPURL, "/cdp/") {
		t.Fatalf("%+v", b)
	}
	// /json/version names the browser's WebSocket through the gateway.
	resp, err := http.Get(b.CDPURL + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ws, _ := v["webSocketDebuggerUrl"].(string); ws != b.WebSocketDebuggerURL {
		t.Fatalf("%q != %q", ws, b.WebSocketDebuggerURL)
	}
	png, err := s.Browser().Screenshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("not a PNG: %q", png[:min(8, len(png))])
	}
	st, err := s.Browser().Stop(ctx)
	if err != nil || st.State != "stopped" || st.CDPURL != "" {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := s.Browser().Screenshot(ctx, false); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("a screenshot of a stopped browser: %v", err)
	}
}
