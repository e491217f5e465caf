// The Go SDK against a live `talon up` (TALON_URL, TALON_API_KEY;
// scripts/test.sh starts one).
package talon_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func client(t *testing.T) *talon.Client {
	t.Helper()
	if os.Getenv("TALON_API_KEY") == "" {
		t.Skip("needs a live server: TALON_URL and TALON_API_KEY")
	}
	c, err := talon.New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sandbox(t *testing.T) (*talon.Sandbox, context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s, err := client(t).Create(ctx, talon.CreateOptions{MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Kill(context.Background()) })
	return s, ctx
}

// Several servers of one platform: the first is gone (nothing listens on
// port 9), so requests go to the next, and stay there.
func TestSeveralServersOneGone(t *testing.T) {
	client(t)
	live := os.Getenv("TALON_URL")
	if live == "" {
		live = "http://127.0.0.1:8080"
	}
	c, err := talon.New(talon.WithBaseURL("http://127.0.0.1:9," + live + "/"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Create(ctx, talon.CreateOptions{MemoryMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Kill(context.Background()) }()
	r, err := s.Commands.Run(ctx, talon.Shell("echo via-next"), nil)
	if err != nil || r.Stdout != "via-next\n" {
		t.Fatalf("%v %+v", err, r)
	}
	dead, err := talon.New(talon.WithBaseURL("http://127.0.0.1:9,http://127.0.0.1:10"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Create(ctx, talon.CreateOptions{}); err == nil {
		t.Fatal("no server answers, yet the create succeeded")
	}
	if _, err := talon.New(talon.WithBaseURL(live + ",")); err == nil {
		t.Fatal("an empty URL in the list was accepted")
	}
}

func TestRunAndErrors(t *testing.T) {
	s, ctx := sandbox(t)
	if s.Info.State != "running" {
		t.Fatalf("state %q", s.Info.State)
	}
	// A non-zero exit is an error, with the result beside it and in it.
	r, err := s.Commands.Run(ctx, talon.Shell("echo hi; echo err >&2; exit 3"), nil)
	var exit *talon.CommandExitError
	if !errors.As(err, &exit) || exit.Result.ExitCode != 3 {
		t.Fatalf("want a CommandExitError, got %v", err)
	}
	if r.Stdout != "hi\n" || r.Stderr != "err\n" || r.ExitCode != 3 {
		t.Fatalf("%+v", r)
	}
	var mu sync.Mutex
	var seen bytes.Buffer
	r, err = s.Commands.Run(ctx, talon.Shell("echo $G; pwd; echo ünïcødé"), &talon.RunOptions{
		Envs: map[string]string{"G": "hallo"}, Cwd: "/tmp",
		OnStdout: func(b []byte) { mu.Lock(); seen.Write(b); mu.Unlock() },
	})
	if err != nil || r.Stdout != "hallo\n/tmp\nünïcødé\n" || seen.String() != r.Stdout {
		t.Fatalf("%v %+v %q", err, r, seen.String())
	}
	r, err = s.Commands.Run(ctx, []string{"cat"}, &talon.RunOptions{Stdin: []byte("ping\n")})
	if err != nil || r.Stdout != "ping\n" {
		t.Fatalf("%v %+v", err, r)
	}
	r, err = s.Commands.Run(ctx, talon.Shell("sleep 30"), &talon.RunOptions{TimeoutSecs: 1})
	var timeout *talon.CommandTimeoutError
	if !errors.As(err, &timeout) || !errors.Is(err, talon.ErrDeadlineExceeded) || !r.TimedOut {
		t.Fatalf("%v %+v", err, r)
	}
	if _, err := client(t).Connect(ctx, "sbx_doesnotexist"); !errors.Is(err, talon.ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}
	bad, _ := talon.New(talon.WithAPIKey("tln_invalid0_xxxxxxxxxxxxxxxxxxxxxxxxxxxx"))
	if _, _, err := bad.List(ctx, 10, ""); !errors.Is(err, talon.ErrUnauthenticated) {
		t.Fatalf("want unauthenticated, got %v", err)
	}
}

func TestBackgroundReattachAndKill(t *testing.T) {
	s, ctx := sandbox(t)
	h, err := s.Commands.Start(ctx, talon.Shell("for i in 1 2 3; do echo $i; sleep 0.1; done"), &talon.RunOptions{Tag: "count"})
	if err != nil || h.PID == 0 {
		t.Fatal(err, h)
	}
	again, err := s.Commands.Connect(ctx, talon.Target{Tag: "count"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := again.Wait(ctx); err != nil || r.Stdout != "1\n2\n3\n" {
		t.Fatalf("%v %+v", err, r)
	}
	sl, err := s.Commands.Start(ctx, talon.Shell("sleep 60"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sl.Kill(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if r, err := sl.Wait(ctx); r == nil || r.Signal != 9 || err == nil {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestFilesAndPty(t *testing.T) {
	s, ctx := sandbox(t)
	data := bytes.Repeat([]byte{0, 1, 2, 255}, 300_000)
	if fi, err := s.Files.Write(ctx, "bin/d.bin", data); err != nil || fi.Size != int64(len(data)) {
		t.Fatal(err, fi)
	}
	if got, err := s.Files.Read(ctx, "bin/d.bin"); err != nil || !bytes.Equal(got, data) {
		t.Fatal("read back differs", err)
	}
	if err := s.Files.Rename(ctx, "bin/d.bin", "bin/e.bin"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Files.Exists(ctx, "bin/d.bin"); ok {
		t.Fatal("old name still there")
	}
	if err := s.Files.MakeDir(ctx, "made/deep"); err != nil {
		t.Fatal(err)
	}
	if fi, err := s.Files.Stat(ctx, "made/deep"); err != nil || fi.Type != "dir" {
		t.Fatal(err, fi)
	}
	if err := s.Files.Remove(ctx, "bin", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Files.Read(ctx, "bin/e.bin"); !errors.Is(err, talon.ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}
	if _, err := s.Files.Read(ctx, "../../etc/passwd"); !errors.Is(err, talon.ErrPermissionDenied) {
		t.Fatalf("want permission denied, got %v", err)
	}
	var mu sync.Mutex
	var screen bytes.Buffer
	p, err := s.Pty.Create(ctx, talon.PtyOptions{Cols: 100, Rows: 40, Cmd: []string{"sh"}, OnData: func(b []byte) {
		mu.Lock()
		screen.Write(b)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SendStdin(ctx, []byte("stty size; echo $((6*7)); exit\n")); err != nil {
		t.Fatal(err)
	}
	if r, err := p.Wait(ctx); err != nil || r.ExitCode != 0 {
		t.Fatal(err, r)
	}
	if out := screen.String(); !strings.Contains(out, "40 100") || !strings.Contains(out, "42") {
		t.Fatalf("screen %q", out)
	}
	if err := s.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if i, _ := s.Refresh(ctx); i.State != "paused" {
		t.Fatalf("state %q", i.State)
	}
	if err := s.Resume(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWatch(t *testing.T) {
	s, ctx := sandbox(t)
	if err := s.Files.MakeDir(ctx, "watched"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := make(chan talon.FileEvent, 64)
	go func() {
		_ = s.Files.Watch(wctx, "watched", false, func(e talon.FileEvent) { got <- e })
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := s.Files.Write(ctx, "watched/a.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-got:
			if strings.Contains(e.Path, ".talon-write-") {
				t.Fatalf("temp file seen: %+v", e)
			}
			if strings.HasSuffix(e.Path, "/a.txt") && e.Type == "write" {
				return
			}
		case <-wctx.Done():
			t.Fatal("no write event for a.txt")
		}
	}
}

func TestPreviewURLIsASignedLink(t *testing.T) {
	s, ctx := sandbox(t)
	if _, err := s.Files.Write(ctx, "site/index.html", []byte("<h1>previewed</h1>")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commands.Start(ctx, talon.Shell("cd /workspace/site && exec python3 -m http.server 8128 >/dev/null 2>&1"), nil); err != nil {
		t.Fatal(err)
	}
	wait := `for i in $(seq 1 100); do python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8128))' 2>/dev/null && exit 0; sleep 0.05; done; exit 1`
	if r, err := s.Commands.Run(ctx, talon.Shell(wait), nil); err != nil || r.ExitCode != 0 {
		t.Fatal(err, r)
	}
	link, err := s.PreviewURL(ctx, 8128, 0)
	if err != nil || !strings.Contains(link, "token=") {
		t.Fatal(err, link)
	}
	if u := os.Getenv("TALON_URL"); strings.Contains(u, "//127.0.0.1:") || strings.Contains(u, "//localhost:") {
		if !strings.Contains(link, "-"+s.Info.ID+".localhost:") {
			t.Fatalf("not a subdomain link: %s", link)
		}
	}
	// net/http follows the link with no cookie jar: served at once.
	path, err := s.PreviewPathURL(ctx, 8128, 60)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || string(body) != "<h1>previewed</h1>" {
		t.Fatalf("%d %q", r.StatusCode, body)
	}
	if r, err := http.Get(s.PreviewAddress(8128)); err != nil || r.StatusCode != 401 {
		t.Fatal(err, r.StatusCode)
	}
}

func TestIsolationGvisor(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	s, err := c.Create(ctx, talon.CreateOptions{Isolation: "gvisor", MemoryMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill(context.Background())
	if s.Info.Isolation != "gvisor" {
		t.Fatalf("isolation %q", s.Info.Isolation)
	}
	r, err := s.Commands.Run(ctx, talon.Shell("cat /proc/version"), nil)
	if err != nil || !strings.Contains(r.Stdout, "gvisor") {
		t.Fatal(err, r)
	}
	if _, err := c.Create(ctx, talon.CreateOptions{Isolation: "vm"}); !errors.Is(err, talon.ErrInvalidArgument) {
		t.Fatalf("an unknown level: %v", err)
	}
}

func TestSnapshotAndFork(t *testing.T) {
	s, ctx := sandbox(t)
	c := client(t)
	if _, err := s.Files.Write(ctx, "/workspace/state.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	snap, err := s.CreateSnapshot(ctx, "")
	if err != nil || !strings.HasPrefix(snap.ID, "snp_") || snap.SandboxID != s.ID() {
		t.Fatal(err, snap)
	}
	if _, err := s.CreateSnapshot(ctx, snap.Name); !errors.Is(err, talon.ErrAlreadyExists) {
		t.Fatalf("a taken name: %v", err)
	}
	list, _, err := c.ListSnapshots(ctx, s.ID(), "")
	if err != nil || len(list) != 1 || list[0].ID != snap.ID {
		t.Fatal(err, list)
	}
	again, err := c.Create(ctx, talon.CreateOptions{SnapshotID: snap.ID, MemoryMiB: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Kill(context.Background())
	if again.Info.SnapshotID != snap.ID {
		t.Fatalf("snapshot id %q", again.Info.SnapshotID)
	}
	if b, err := again.Files.Read(ctx, "/workspace/state.txt"); err != nil || string(b) != "kept" {
		t.Fatal(err, string(b))
	}
	forks, err := s.Fork(ctx, 2)
	if err != nil || len(forks) != 2 || forks[0].ID() == forks[1].ID() {
		t.Fatal(err, forks)
	}
	for _, f := range forks {
		defer f.Kill(context.Background())
	}
	if _, err := forks[0].Files.Write(ctx, "/workspace/state.txt", []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if b, _ := forks[1].Files.Read(ctx, "/workspace/state.txt"); string(b) != "kept" {
		t.Fatalf("fork 1 read %q", b)
	}
	if err := c.DeleteSnapshot(ctx, snap.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSnapshot(ctx, snap.ID); !errors.Is(err, talon.ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
}
