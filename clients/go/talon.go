// Package talon is the Go SDK for Talon Sandbox. It is context-first and
// uses only net/http:
//
//	c, _ := talon.New()                                   // TALON_API_KEY, TALON_URL
//	sbx, _ := c.Create(ctx, talon.CreateOptions{})        // waits until it runs
//	r, _ := sbx.Commands.Run(ctx, talon.Shell("echo hi"), nil)
//	fmt.Print(r.Stdout, r.ExitCode)
//	sbx.Kill(ctx)
//
// Unary calls go through the client oapi-codegen generates from the OpenAPI
// document (internal/api); streams (NDJSON lines) and raw file bodies use
// net/http directly. Errors are *Error; compare with errors.Is against
// ErrNotFound and the other sentinels.
package talon

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sets the credential (an API key or an access token).
func WithAPIKey(k string) Option { return func(c *Client) { c.apiKey = k } }

// WithBaseURL sets the REST gateway's address; several servers of one
// platform, comma-separated, are tried in turn (servers.go).
func WithBaseURL(u string) Option { return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") } }

// WithHTTPClient replaces the net/http client.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithHTTP2 speaks HTTP/2 to a plain-http gateway by prior knowledge
// (h2c, which the gateway serves; a proxy in between may not). Over https
// net/http negotiates HTTP/2 by itself. TALON_HTTP2=1 sets it too.
func WithHTTP2() Option { return func(c *Client) { c.h2c = true } }

// h2cClient is a client that speaks only HTTP/2, unencrypted.
func h2cClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: t}
}

// Client talks to one Talon platform.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
	api     *api.ClientWithResponses
	h2c     bool
}

// New makes a client; unset options come from TALON_API_KEY and TALON_URL
// (default http://127.0.0.1:8080).
func New(opts ...Option) (*Client, error) {
	c := &Client{baseURL: strings.TrimRight(os.Getenv("TALON_URL"), "/"), apiKey: os.Getenv("TALON_API_KEY"), http: http.DefaultClient}
	if c.baseURL == "" {
		c.baseURL = "http://127.0.0.1:8080"
	}
	switch os.Getenv("TALON_HTTP2") {
	case "", "0", "false":
	case "1", "true":
		c.h2c = true
	default:
		return nil, &Error{Code: "INVALID_ARGUMENT", Message: "TALON_HTTP2 is 1/true or 0/false"}
	}
	for _, o := range opts {
		o(c)
	}
	if c.h2c && c.http == http.DefaultClient && strings.HasPrefix(c.baseURL, "http://") {
		c.http = h2cClient()
	}
	if c.apiKey == "" {
		return nil, &Error{Code: "UNAUTHENTICATED", Message: "no API key: use WithAPIKey or set TALON_API_KEY"}
	}
	urls, err := parseServers(c.baseURL)
	if err != nil {
		return nil, err
	}
	c.baseURL = urls[0].String()
	if len(urls) > 1 {
		inner := c.http.Transport
		if inner == nil {
			inner = http.DefaultTransport
		}
		h := *c.http
		h.Transport = &servers{urls: urls, inner: inner}
		c.http = &h
	}
	auth := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+c.apiKey)
		return nil
	}
	a, err := api.NewClientWithResponses(c.baseURL, api.WithHTTPClient(c.http), api.WithRequestEditorFn(auth))
	if err != nil {
		return nil, err
	}
	c.api = a
	return c, nil
}

// do sends a request of our own (streams, raw bodies) with the credential.
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, header map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, check(resp, b)
	}
	return resp, nil
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func seconds(d float64) string { return strconv.FormatFloat(d, 'f', -1, 64) + "s" }

// Shell is an argv that runs cmd under `sh -c`.
func Shell(cmd string) []string { return []string{"sh", "-c", cmd} }

// Identity is who a credential is.
type Identity struct {
	TenantID      string
	UserID        string
	Email         string
	Role          string
	APIKeyID      string
	PlatformAdmin bool
}

// WhoAmI says who the client's credential is.
func (c *Client) WhoAmI(ctx context.Context) (Identity, error) {
	r, err := c.api.AuthServiceWhoAmIWithResponse(ctx)
	if err != nil {
		return Identity{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return Identity{}, err
	}
	w := r.JSON200
	return Identity{
		TenantID:      deref(w.TenantId),
		UserID:        deref(w.UserId),
		Email:         deref(w.Email),
		Role:          strings.ToLower(strings.TrimPrefix(string(deref(w.Role)), "ROLE_")),
		APIKeyID:      deref(w.ApiKeyId),
		PlatformAdmin: deref(w.PlatformAdmin),
	}, nil
}
