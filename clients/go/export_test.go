package talon

import "net/http"

// H2CClientForTest is the client WithHTTP2 uses, for the tests.
func H2CClientForTest() *http.Client { return h2cClient() }

// SpeaksH2C says whether a client's transport is the HTTP/2-only one.
func SpeaksH2C(c *Client) bool {
	t, ok := c.http.Transport.(*http.Transport)
	return ok && t.Protocols != nil && t.Protocols.UnencryptedHTTP2() && !t.Protocols.HTTP1()
}
