// The surface agent builders know from E2B's SDKs, against a live
// `talon up` (TALON_URL, TALON_API_KEY; scripts/test.sh starts one).
package talon_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func TestCreateOptionsAndList(t *testing.T) {
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := runID()
	s, err := c.Create(ctx, talon.CreateOptions{Template: "host", Metadata: map[string]string{"run": run}, MemoryMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), s.ID())
	i, err := s.GetInfo(ctx)
	if err != nil || i.Metadata["run"] != run || i.Image != "host" || !i.EndAt.After(i.StartedAt) {
		t.Fatalf("%v %+v", err, i)
	}
	key := "go-" + runID()
	closed := false
	a, err := c.Create(ctx, talon.CreateOptions{IdempotencyKey: key, MemoryMiB: 128, OnTimeout: "kill", AllowInternetAccess: &closed})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), a.ID())
	b, err := c.Create(ctx, talon.CreateOptions{IdempotencyKey: key, MemoryMiB: 128, OnTimeout: "kill", AllowInternetAccess: &closed})
	if err != nil || b.ID() != a.ID() {
		t.Fatalf("%v: %v != %s", err, b, a.ID())
	}
	// The key with another request is refused, never answered with a's sandbox.
	if _, err := c.Create(ctx, talon.CreateOptions{IdempotencyKey: key, MemoryMiB: 256}); err == nil || !strings.Contains(err.Error(), "idempotency key") {
		t.Fatalf("another request under the key: %v", err)
	}
	if m := string(*a.Info.Raw.NetworkPolicy.Mode); m != "EGRESS_MODE_SEALED" || string(*a.Info.Raw.TimeoutAction) != "TIMEOUT_ACTION_DELETE" {
		t.Fatalf("policy %s", m)
	}
	n, err := c.Create(ctx, talon.CreateOptions{MemoryMiB: 128, Network: &talon.NetworkOptions{AllowOut: []string{"1.1.1.1", "pypi.org"}, DenyOut: []string{"0.0.0.0/0"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), n.ID())
	if p := n.Info.Raw.NetworkPolicy; (*p.AllowCidrs)[0] != "1.1.1.1/32" || (*p.AllowDomains)[0] != "pypi.org" {
		t.Fatalf("%+v", p)
	}
	if _, err := c.Create(ctx, talon.CreateOptions{Network: &talon.NetworkOptions{DenyOut: []string{"8.8.8.8"}}}); !errors.Is(err, talon.ErrInvalidArgument) {
		t.Fatalf("want invalid argument, got %v", err)
	}
	got, _, err := c.ListFiltered(ctx, talon.ListOptions{Metadata: map[string]string{"run": run}, States: []string{"running"}})
	if err != nil || len(got) != 1 || got[0].ID != s.ID() {
		t.Fatalf("%v %+v", err, got)
	}
	if got, _, _ := c.ListFiltered(ctx, talon.ListOptions{Metadata: map[string]string{"run": run}, States: []string{"paused"}}); len(got) != 0 {
		t.Fatalf("%+v", got)
	}
	if _, _, err := c.ListFiltered(ctx, talon.ListOptions{States: []string{"sleeping"}}); !errors.Is(err, talon.ErrInvalidArgument) {
		t.Fatal(err)
	}
	page := "p-" + run
	var made []string
	for k := 0; k < 3; k++ {
		x, err := c.Create(ctx, talon.CreateOptions{Metadata: map[string]string{"page": page}, MemoryMiB: 64, NoWait: true})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, x.ID())
		defer c.Kill(context.Background(), x.ID())
	}
	var seen []string
	token, pages := "", 0
	for {
		got, next, err := c.ListFiltered(ctx, talon.ListOptions{Metadata: map[string]string{"page": page}, PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			seen = append(seen, g.ID)
		}
		pages++
		if token = next; token == "" {
			break
		}
	}
	sort.Strings(seen)
	sort.Strings(made)
	if strings.Join(seen, ",") != strings.Join(made, ",") || pages != 2 {
		t.Fatalf("%v %v %d", seen, made, pages)
	}
}

func TestConnectResumesMetricsAndKillByID(t *testing.T) {
	s, ctx := sandbox(t)
	c := client(t)
	if err := s.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if i, _ := c.GetInfo(ctx, s.ID()); i.State != "paused" {
		t.Fatalf("GetInfo resumed it: %q", i.State)
	}
	again, err := c.Connect(ctx, s.ID(), talon.ConnectOptions{TimeoutSecs: 300})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := again.IsRunning(ctx); !ok {
		t.Fatal("not running after connect")
	}
	before := again.Info.EndAt
	if err := again.SetTimeout(ctx, 900); err != nil {
		t.Fatal(err)
	}
	if i, _ := again.GetInfo(ctx); !i.EndAt.After(before) {
		t.Fatalf("%v !> %v", i.EndAt, before)
	}
	m, err := again.GetMetrics(ctx)
	if err != nil || len(m) != 1 || m[0].CPUCount < 1 || m[0].MemTotal != 256<<20 || m[0].MemUsed <= 0 || m[0].DiskUsed <= 0 || m[0].DiskTotal <= m[0].DiskUsed {
		t.Fatalf("%v %+v", err, m)
	}
	if ok, err := c.Kill(ctx, s.ID()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := c.Connect(ctx, s.ID()); !errors.Is(err, talon.ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}
	if ok, err := c.Kill(ctx, "sbx_"+strings.Repeat("a", 26)); ok || err != nil {
		t.Fatal(ok, err)
	}
}

func TestDisconnectUserFilesAndURLs(t *testing.T) {
	s, ctx := sandbox(t)
	h, err := s.Commands.Start(ctx, talon.Shell("for i in 1 2 3 4; do echo $i; sleep 0.3; done"), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	h.Disconnect()
	if _, err := h.Wait(ctx); err == nil {
		t.Fatal("a disconnected handle waited")
	}
	again, err := s.Commands.Connect(ctx, talon.Target{PID: h.PID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := again.Wait(ctx); err != nil || r.Stdout != "1\n2\n3\n4\n" {
		t.Fatalf("%v %+v", err, r)
	}
	if r, err := s.Commands.Run(ctx, talon.Shell("sleep 1.2; echo slow"), &talon.RunOptions{TimeoutSecs: -1}); err != nil || r.Stdout != "slow\n" {
		t.Fatalf("%v %+v", err, r)
	}
	infos, err := s.Files.WriteFiles(ctx, []talon.WriteEntry{{Path: "batch/a.txt", Data: []byte("a")}, {Path: "batch/b.bin", Data: []byte{0, 1}}})
	if err != nil || len(infos) != 2 || infos[1].Size != 2 {
		t.Fatal(err, infos)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000)
	if _, err := s.Files.Write(ctx, "batch/big.bin", big); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Files.ReadStream(ctx, "batch/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rs)
	rs.Close()
	if !bytes.Equal(got, big) {
		t.Fatalf("streamed %d bytes", len(got))
	}
	if _, err := s.Files.Write(ctx, "/home/user/mine.txt", []byte("mine"), talon.AsUser("user")); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Commands.Run(ctx, talon.Shell("stat -c %U /home/user/mine.txt"), nil); r.Stdout != "user\n" {
		t.Fatalf("%+v", r)
	}
	if _, err := s.Files.Write(ctx, "secret.txt", []byte("s"), talon.WithMode(0o600)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Files.Read(ctx, "secret.txt", talon.AsUser("user")); !errors.Is(err, talon.ErrPermissionDenied) {
		t.Fatalf("want permission denied, got %v", err)
	}
	if err := s.Files.MakeDir(ctx, "/home/user/d", talon.AsUser("user")); err != nil {
		t.Fatal(err)
	}
	if err := s.Files.Rename(ctx, "/home/user/d", "/home/user/e", talon.AsUser("user")); err != nil {
		t.Fatal(err)
	}
	if l, err := s.Files.List(ctx, "/home/user/e", talon.AsUser("user")); err != nil || len(l) != 0 {
		t.Fatal(err, l)
	}
	if err := s.Files.Remove(ctx, "/home/user/e", false, talon.AsUser("user")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Files.Exists(ctx, "/home/user/e", talon.AsUser("user")); ok {
		t.Fatal("still there")
	}
	up, err := s.UploadURL(ctx, "signed/in.txt", 60)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(up, "application/octet-stream", strings.NewReader("uploaded"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(err, resp)
	}
	resp.Body.Close()
	down, err := s.DownloadURL(ctx, "signed/in.txt", 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(down)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "uploaded" {
		t.Fatalf("%q", body)
	}
	other := strings.Replace(down, "path=signed/in.txt", "path=signed/other.txt", 1)
	if resp, _ := http.Get(other); other == down || resp.StatusCode != 403 {
		t.Fatalf("%s %v", other, resp.StatusCode)
	}
}

func TestWatchDirPtyAndHost(t *testing.T) {
	s, ctx := sandbox(t)
	if err := s.Files.MakeDir(ctx, "polled"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var called []talon.FileEvent
	w, err := s.Files.WatchDir(ctx, "polled", false, talon.OnEvent(func(e talon.FileEvent) { mu.Lock(); called = append(called, e); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Files.Write(ctx, "polled/x.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var polled []talon.FileEvent
	for k := 0; k < 50 && !hasWrite(polled, "/x.txt"); k++ {
		polled = append(polled, w.GetNewEvents()...)
		time.Sleep(100 * time.Millisecond)
	}
	w.Stop()
	mu.Lock()
	if !hasWrite(polled, "/x.txt") || !hasWrite(called, "/x.txt") {
		t.Fatalf("%v %v", polled, called)
	}
	mu.Unlock()
	var screen bytes.Buffer
	p, err := s.Pty.Create(ctx, talon.PtyOptions{Cols: 90, Rows: 20, User: "user", TimeoutSecs: 30,
		Cmd:    []string{"bash", "-c", "read x; stty size; echo got $x; whoami"},
		OnData: func(b []byte) { mu.Lock(); screen.Write(b); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pty.Resize(ctx, p.PID, 120, 33); err != nil {
		t.Fatal(err)
	}
	if err := s.Pty.SendInput(ctx, p.PID, []byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	again, err := s.Pty.Connect(ctx, p.PID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := p.Wait(ctx); err != nil || r.ExitCode != 0 {
		t.Fatal(err, r)
	}
	mu.Lock()
	out := screen.String()
	mu.Unlock()
	if !strings.Contains(out, "33 120") || !strings.Contains(out, "got hi") || !strings.Contains(out, "user") {
		t.Fatalf("%q", out)
	}
	if r, _ := again.Wait(ctx); r == nil || !strings.Contains(r.Stdout, "got hi") {
		t.Fatalf("%+v", r)
	}
	long, err := s.Pty.Create(ctx, talon.PtyOptions{Cmd: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pty.Kill(ctx, long.PID); err != nil {
		t.Fatal(err)
	}
	var exit *talon.CommandExitError
	if _, err := long.Wait(ctx); !errors.As(err, &exit) {
		t.Fatalf("want a CommandExitError, got %v", err)
	}
	url, err := s.GetHost(ctx, 3000)
	if err != nil || !strings.Contains(url, "token=") || !strings.Contains(url, s.ID()) {
		t.Fatal(err, url)
	}
}

func hasWrite(events []talon.FileEvent, suffix string) bool {
	for _, e := range events {
		if e.Type == "write" && strings.HasSuffix(e.Path, suffix) {
			return true
		}
	}
	return false
}

func TestHTTP2ByPriorKnowledge(t *testing.T) {
	client(t)
	c, err := talon.New(talon.WithHTTP2())
	if err != nil || !talon.SpeaksH2C(c) {
		t.Fatal("WithHTTP2 did not make an HTTP/2 client", err)
	}
	if plain, _ := talon.New(); talon.SpeaksH2C(plain) {
		t.Fatal("HTTP/2 by prior knowledge is opt-in")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := c.Create(ctx, talon.CreateOptions{MemoryMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(context.Background())
	if r, err := s.Commands.Run(ctx, talon.Shell("echo over h2"), nil); err != nil || r.Stdout != "over h2\n" {
		t.Fatal(err, r)
	}
	data := bytes.Repeat([]byte{1, 2, 3}, 100_000)
	if _, err := s.Files.Write(ctx, "h2.bin", data); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Files.Read(ctx, "h2.bin"); err != nil || !bytes.Equal(got, data) {
		t.Fatal(err, len(got))
	}
	// The transport speaks HTTP/2 only: a plain request through it says so.
	url, _ := s.DownloadURL(ctx, "h2.bin", 0)
	resp, err := talon.H2CClientForTest().Get(url)
	if err != nil || resp.ProtoMajor != 2 {
		t.Fatal(err, resp)
	}
	resp.Body.Close()
}
