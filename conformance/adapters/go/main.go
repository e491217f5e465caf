// Conformance adapter for the Go SDK: runs each case's steps and writes
// what it observed. The runner judges.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	talon "github.com/talon-sandbox/talon/clients/go"
)

type step struct {
	Op   string         `json:"op"`
	Args map[string]any `json:"args"`
}

type tcase struct {
	Name  string `json:"name"`
	Steps []step `json:"steps"`
}

var keys = map[string]string{
	"":        os.Getenv("TALON_API_KEY"),
	"viewer":  os.Getenv("TALON_VIEWER_KEY"),
	"alt":     os.Getenv("TALON_ALT_KEY"),
	"invalid": "tln_invalid0_" + strings.Repeat("x", 32),
}

func str(a map[string]any, k string) string { s, _ := a[k].(string); return s }

func strMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

func num(a map[string]any, k string, def float64) float64 {
	if v, ok := a[k].(float64); ok {
		return v
	}
	return def
}

func generate(size, seed int) []byte {
	out := make([]byte, size)
	for i := range out {
		out[i] = byte((uint32(i)*2654435761 + uint32(seed)) >> 24)
	}
	return out
}

func argv(v any) []string {
	switch c := v.(type) {
	case string:
		return talon.Shell(c)
	case []any:
		out := make([]string, len(c))
		for i, x := range c {
			out[i], _ = x.(string)
		}
		return out
	}
	return nil
}

type runner struct {
	ctx   context.Context
	slots map[string]*talon.Sandbox
}

func (r *runner) client(a map[string]any) *talon.Client {
	c, err := talon.New(talon.WithAPIKey(keys[str(a, "key")]))
	if err != nil {
		panic(err)
	}
	return c
}

func slot(a map[string]any) string {
	if s := str(a, "slot"); s != "" {
		return s
	}
	return "a"
}

// finished is a command's result, also when it ended non-zero or timed
// out (the SDK returns the result beside an error then).
func finished(res *talon.CommandResult, err error) (*talon.CommandResult, error) {
	var exit *talon.CommandExitError
	var timeout *talon.CommandTimeoutError
	if errors.As(err, &exit) || errors.As(err, &timeout) {
		return res, nil
	}
	return res, err
}

// sandbox is the step's slot as seen with the step's key.
func (r *runner) sandbox(a map[string]any) (*talon.Sandbox, error) {
	s := r.slots[slot(a)]
	if str(a, "key") == "" {
		return s, nil
	}
	return r.client(a).Connect(r.ctx, s.ID())
}

func (r *runner) step(op string, a map[string]any) (map[string]any, error) {
	ctx := r.ctx
	switch op {
	case "create":
		envs := map[string]string{}
		if e, ok := a["envs"].(map[string]any); ok {
			for k, v := range e {
				envs[k], _ = v.(string)
			}
		}
		image := str(a, "image")
		s, err := r.client(a).Create(ctx, talon.CreateOptions{Image: image, Envs: envs, CPUMillis: 250, MemoryMiB: 256,
			Metadata: strMap(a["metadata"]), IdempotencyKey: str(a, "idempotency_key"), Isolation: str(a, "isolation")})
		if err != nil {
			return nil, err
		}
		same := ""
		for n, o := range r.slots {
			if o.ID() == s.ID() {
				same = n
			}
		}
		r.slots[slot(a)] = s
		return map[string]any{"sandbox_id": s.ID(), "state": s.Info.State, "same_as": same, "isolation": s.Info.Isolation}, nil
	case "list_filtered":
		o := talon.ListOptions{Metadata: strMap(a["metadata"])}
		if st, ok := a["states"].([]any); ok {
			for _, v := range st {
				s, _ := v.(string)
				o.States = append(o.States, s)
			}
		}
		ids := map[string]bool{}
		for {
			page, next, err := r.client(a).ListFiltered(ctx, o)
			if err != nil {
				return nil, err
			}
			for _, i := range page {
				ids[i.ID] = true
			}
			if o.PageToken = next; next == "" {
				break
			}
		}
		slots := []string{}
		for n, s := range r.slots {
			if ids[s.ID()] {
				slots = append(slots, n)
			}
		}
		sort.Strings(slots)
		return map[string]any{"slots": slots}, nil
	case "connect":
		s, err := r.client(a).Connect(ctx, r.slots[slot(a)].ID())
		if err != nil {
			return nil, err
		}
		return map[string]any{"state": s.Info.State}, nil
	case "agent_run":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		prompt := str(a, "prompt")
		run, err := s.Agent().Run(ctx, argv(a["cmd"]), talon.AgentOptions{Prompt: prompt})
		if err != nil {
			return nil, err
		}
		again, err := s.Agent().Connect(ctx, run.RunID, 1, nil)
		if err != nil {
			return nil, err
		}
		kinds, changes, out := []string{}, []string{}, ""
		for _, e := range run.Events {
			switch e.Kind {
			case "fileChange":
				kinds = append(kinds, "file_change")
				changes = append(changes, e.Change+" "+e.Path)
			case "output":
				kinds = append(kinds, e.Kind)
				out += e.Text + "\n"
			default:
				kinds = append(kinds, e.Kind)
			}
		}
		matches := len(again.Events) == len(run.Events)-1
		for i := 0; matches && i < len(again.Events); i++ {
			matches = again.Events[i].Seq == run.Events[i+1].Seq
		}
		return map[string]any{"kinds": kinds, "output": out, "file_changes": changes,
			"exit_code": run.ExitCode, "replay_matches": matches}, nil
	case "browser":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		b, err := s.Browser().Start(ctx, talon.BrowserOptions{WindowSize: str(a, "window_size")})
		if err != nil {
			return nil, err
		}
		resp, err := http.Get(b.CDPURL + "/json/version")
		if err != nil {
			return nil, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var version map[string]any
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, err
		}
		png, err := s.Browser().Screenshot(ctx, false)
		if err != nil {
			return nil, err
		}
		stopped, err := s.Browser().Stop(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"state": b.State, "window_size": b.WindowSize,
			"cdp_url_names_sandbox": strings.Contains(b.CDPURL, "/cdp/"+s.ID()+"/"),
			"version_ws_matches":    version["webSocketDebuggerUrl"] == b.WebSocketDebuggerURL,
			"loopback_hidden":       !strings.Contains(string(raw), "127.0.0.1:9222"),
			"png":                   strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n"),
			"stopped_state":         stopped.State, "stopped_cdp_url": stopped.CDPURL}, nil
	case "code":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		c, err := s.Code().CreateContext(ctx, str(a, "language"), "", nil)
		if err != nil {
			return nil, err
		}
		texts, stdouts, errs := []any{}, []any{}, []any{}
		for _, code := range a["runs"].([]any) {
			x, err := s.Code().Run(ctx, code.(string), talon.RunCodeOptions{Context: c.ID})
			if err != nil {
				return nil, err
			}
			name := ""
			if x.Error != nil {
				name = x.Error.Name
			}
			texts, stdouts, errs = append(texts, x.Text), append(stdouts, x.Stdout), append(errs, name)
		}
		if err := s.Code().DeleteContext(ctx, c.ID); err != nil {
			return nil, err
		}
		return map[string]any{"texts": texts, "stdouts": stdouts, "errors": errs}, nil
	case "metrics":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		m, err := s.GetMetrics(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"cpu_count": m[0].CPUCount, "mem_total_mib": m[0].MemTotal >> 20,
			"mem_used_positive": m[0].MemUsed > 0, "disk_used_positive": m[0].DiskUsed > 0}, nil
	case "file_url":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		var resp *http.Response
		if str(a, "operation") == "write" {
			u, err := s.UploadURL(ctx, str(a, "path"), 0)
			if err != nil {
				return nil, err
			}
			resp, err = http.Post(u, "application/octet-stream", strings.NewReader(str(a, "text")))
			if err != nil {
				return nil, err
			}
		} else {
			u, err := s.DownloadURL(ctx, str(a, "path"), 0)
			if err != nil {
				return nil, err
			}
			if resp, err = http.Get(u); err != nil {
				return nil, err
			}
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out := map[string]any{"status": resp.StatusCode}
		if str(a, "operation") == "read" {
			out["text"] = string(body)
		}
		return out, nil
	case "get":
		id := str(a, "sandbox_id")
		if id == "" {
			id = r.slots[slot(a)].ID()
		}
		i, err := r.client(a).GetInfo(ctx, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"state": i.State}, nil
	case "pause", "resume", "kill":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		switch op {
		case "pause":
			err = s.Pause(ctx)
		case "resume":
			err = s.Resume(ctx)
		default:
			err = s.Kill(ctx)
		}
		return map[string]any{}, err
	case "list_all":
		c := r.client(a)
		var ids []string
		token, pages := "", 0
		for {
			page, next, err := c.List(ctx, int(num(a, "page_size", 50)), token)
			if err != nil {
				return nil, err
			}
			for _, s := range page {
				ids = append(ids, s.ID)
			}
			pages++
			if next == "" {
				break
			}
			token = next
		}
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		all := true
		for _, s := range r.slots {
			all = all && seen[s.ID()]
		}
		return map[string]any{"all_created_listed": all, "unique": len(seen) == len(ids), "pages": pages}, nil
	case "run":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		o := &talon.RunOptions{Cwd: str(a, "cwd"), TimeoutSecs: num(a, "timeout_s", -1)}
		if e, ok := a["envs"].(map[string]any); ok {
			o.Envs = map[string]string{}
			for k, v := range e {
				o.Envs[k], _ = v.(string)
			}
		}
		if in, ok := a["stdin"].(string); ok {
			o.Stdin = []byte(in)
		}
		res, err := finished(s.Commands.Run(ctx, argv(a["cmd"]), o))
		if err != nil {
			return nil, err
		}
		return map[string]any{"stdout": res.Stdout, "stderr": res.Stderr, "exit_code": res.ExitCode, "signal": res.Signal, "timed_out": res.TimedOut}, nil
	case "run_bg":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		h, err := s.Commands.Start(ctx, argv(a["cmd"]), &talon.RunOptions{Tag: str(a, "tag")})
		if err != nil {
			return nil, err
		}
		return map[string]any{"pid": h.PID}, nil
	case "reconnect":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		h, err := s.Commands.Connect(ctx, talon.Target{Tag: str(a, "tag")}, nil)
		if err != nil {
			return nil, err
		}
		res, err := finished(h.Wait(ctx))
		if err != nil {
			return nil, err
		}
		return map[string]any{"stdout": res.Stdout, "stderr": res.Stderr, "exit_code": res.ExitCode, "signal": res.Signal}, nil
	case "signal":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		return map[string]any{}, s.Commands.Signal(ctx, talon.Target{Tag: str(a, "tag")}, int(num(a, "signal", 9)))
	case "pty":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		var mu sync.Mutex
		var out strings.Builder
		h, err := s.Pty.Create(ctx, talon.PtyOptions{Cols: int(num(a, "cols", 80)), Rows: int(num(a, "rows", 24)), Cmd: argv(a["cmd"]),
			OnData: func(b []byte) { mu.Lock(); out.Write(b); mu.Unlock() }})
		if err != nil {
			return nil, err
		}
		if err := h.SendStdin(ctx, []byte(str(a, "input"))); err != nil {
			return nil, err
		}
		res, err := finished(h.Wait(ctx))
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"output": out.String(), "exit_code": res.ExitCode}, nil
	case "write":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		data := []byte(str(a, "text"))
		if g, ok := a["generate"].(map[string]any); ok {
			data = generate(int(num(g, "size", 0)), int(num(g, "seed", 0)))
		}
		fi, err := s.Files.Write(ctx, str(a, "path"), data, talon.AsUser(str(a, "user")))
		if err != nil {
			return nil, err
		}
		return map[string]any{"size": fi.Size}, nil
	case "read":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		data, err := s.Files.Read(ctx, str(a, "path"), talon.AsUser(str(a, "user")))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		out := map[string]any{"size": len(data), "sha256": hex.EncodeToString(sum[:])}
		if utf8.Valid(data) {
			out["text"] = string(data)
		}
		return out, nil
	case "list_dir":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		fs, err := s.Files.List(ctx, str(a, "path"))
		if err != nil {
			return nil, err
		}
		names := []string{}
		for _, f := range fs {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		return map[string]any{"names": names}, nil
	case "stat":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		f, err := s.Files.Stat(ctx, str(a, "path"))
		if err != nil {
			return nil, err
		}
		return map[string]any{"size": f.Size, "type": f.Type}, nil
	case "mkdir", "move", "remove", "exists":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		switch op {
		case "mkdir":
			return map[string]any{}, s.Files.MakeDir(ctx, str(a, "path"))
		case "move":
			return map[string]any{}, s.Files.Rename(ctx, str(a, "from"), str(a, "to"))
		case "remove":
			rec, _ := a["recursive"].(bool)
			return map[string]any{}, s.Files.Remove(ctx, str(a, "path"), rec)
		default:
			ok, err := s.Files.Exists(ctx, str(a, "path"))
			return map[string]any{"exists": ok}, err
		}
	case "preview_token":
		s, err := r.sandbox(a)
		if err != nil {
			return nil, err
		}
		tok, link, err := s.PreviewToken(ctx, int(num(a, "port", 0)), num(a, "ttl_s", 0))
		if err != nil {
			return nil, err
		}
		return map[string]any{"url": link, "token_present": tok != "", "url_names_sandbox": strings.Contains(link, s.ID())}, nil
	case "whoami":
		w, err := r.client(a).WhoAmI(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"tenant_id": w.TenantID}, nil
	}
	return nil, fmt.Errorf("unknown op %s", op)
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cases []tcase
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	results := map[string][]map[string]any{}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		r := &runner{ctx: ctx, slots: map[string]*talon.Sandbox{}}
		out := []map[string]any{}
		for _, st := range c.Steps {
			if st.Args == nil {
				st.Args = map[string]any{}
			}
			res, err := r.step(st.Op, st.Args)
			var te *talon.Error
			switch {
			case errors.As(err, &te):
				res = map[string]any{"error": te.Code, "message": te.Message}
			case err != nil:
				res = map[string]any{"error": "ADAPTER", "message": err.Error()}
			}
			out = append(out, res)
		}
		for _, s := range r.slots {
			_ = s.Kill(context.Background())
		}
		cancel()
		results[c.Name] = out
	}
	b, _ := json.MarshalIndent(results, "", " ")
	if err := os.WriteFile(os.Args[2], b, 0o644); err != nil {
		panic(err)
	}
}
