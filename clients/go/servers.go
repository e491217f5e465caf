package talon

// Several servers of one platform (WithBaseURL("http://a:8080,http://b:8080")
// or TALON_URL so): requests go to the current one. A request that could
// not connect there (it reached no server) is sent to the next ones in
// turn, and the first that answers becomes current; one that failed after
// it was sent is not resent (a create may have happened), but the next
// request goes to the next server, so a retry reaches a live one.

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

type servers struct {
	urls    []*url.URL
	current atomic.Int64
	inner   http.RoundTripper
}

// parseServers splits a comma-separated list of base URLs.
func parseServers(list string) ([]*url.URL, error) {
	var out []*url.URL
	for _, raw := range strings.Split(list, ",") {
		raw = strings.TrimRight(strings.TrimSpace(raw), "/")
		u, err := url.Parse(raw)
		if raw == "" || err != nil || u.Host == "" {
			return nil, &Error{Code: "INVALID_ARGUMENT", Message: "bad URL " + strings.TrimSpace(raw) + " in " + list}
		}
		out = append(out, u)
	}
	return out, nil
}

// at is the request sent to server i instead of the first.
func (s *servers) at(req *http.Request, i int) (*http.Request, error) {
	if i == 0 {
		return req, nil
	}
	first, to := s.urls[0], s.urls[i]
	r := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host = to.Scheme, to.Host
	u.Path = to.Path + strings.TrimPrefix(req.URL.Path, first.Path)
	u.RawPath = ""
	r.URL, r.Host = &u, to.Host
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, errors.New("the request body cannot be sent again")
		}
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	return r, nil
}

func (s *servers) RoundTrip(req *http.Request) (*http.Response, error) {
	n := len(s.urls)
	start := int(s.current.Load()) % n
	var last error
	for k := 0; k < n; k++ {
		i := (start + k) % n
		r, err := s.at(req, i)
		if err != nil {
			return nil, last
		}
		resp, err := s.inner.RoundTrip(r)
		if err == nil {
			s.current.Store(int64(i))
			return resp, nil
		}
		last = err
		s.current.CompareAndSwap(int64(i), int64((i+1)%n))
		// Only a request that reached no server is sent to the next.
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return nil, err
		}
	}
	return nil, last
}
