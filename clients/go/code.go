package talon

// Code contexts: kernels inside the sandbox (Python in ipykernel,
// JavaScript in Node, Bash) that keep their state between runs.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// CodeContext is a kernel that keeps its state between runs.
type CodeContext struct {
	ID             string
	Language       string
	Cwd            string
	ExecutionCount int
}

// CodeResult is a rich result by MIME type; binary types (PNG, ...) are
// base64 text. IsMainResult marks the run's own value.
type CodeResult struct {
	Data         map[string]string
	IsMainResult bool
}

// PNG decodes the result's image/png, if it has one.
func (r CodeResult) PNG() ([]byte, bool) {
	p, ok := r.Data["image/png"]
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(p))
	return b, err == nil
}

// CodeError is what the code raised (in Bash: a non-zero status).
type CodeError struct {
	Name      string
	Value     string
	Traceback []string
}

// Execution is a run: its output, results, error (nil when it succeeded)
// and how it ended. Text is the main result's text/plain.
type Execution struct {
	Stdout, Stderr string
	Results        []CodeResult
	Error          *CodeError
	Text           string
	ExecutionCount int
	Duration       time.Duration
	Interrupted    bool
	TimedOut       bool
}

// RunCodeOptions are RunCode's: the context (its ID) or, unset, the
// default context of Language ("python" when empty); TimeoutSeconds (5
// minutes when 0); callbacks as events arrive.
type RunCodeOptions struct {
	Context        string
	Language       string
	TimeoutSeconds float64
	OnStdout       func(string)
	OnStderr       func(string)
	OnResult       func(CodeResult)
}

// Code is the sandbox's code contexts.
type Code struct{ s *Sandbox }

// Code gives the sandbox's code contexts.
func (s *Sandbox) Code() *Code { return &Code{s} }

func codeLanguage(l string) (string, error) {
	switch strings.ToLower(l) {
	case "python":
		return "CODE_LANGUAGE_PYTHON", nil
	case "javascript", "js":
		return "CODE_LANGUAGE_JAVASCRIPT", nil
	case "bash":
		return "CODE_LANGUAGE_BASH", nil
	}
	return "", &Error{Code: "INVALID_ARGUMENT", Message: fmt.Sprintf("unknown language %q: python, javascript or bash", l)}
}

type wireContext struct {
	ContextID      string `json:"contextId"`
	Language       string `json:"language"`
	Cwd            string `json:"cwd"`
	ExecutionCount int    `json:"executionCount"`
}

func (w wireContext) context() CodeContext {
	return CodeContext{ID: w.ContextID, Cwd: w.Cwd, ExecutionCount: w.ExecutionCount,
		Language: strings.ToLower(strings.TrimPrefix(w.Language, "CODE_LANGUAGE_"))}
}

func (c *Code) call(ctx context.Context, method, rest string, body any) (json.RawMessage, error) {
	b := &Browser{c.s}
	return b.call(ctx, method, rest, body)
}

func (c *Code) one(ctx context.Context, method, rest string, body any) (CodeContext, error) {
	raw, err := c.call(ctx, method, rest, body)
	if err != nil {
		return CodeContext{}, err
	}
	var r struct {
		Context wireContext `json:"context"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return CodeContext{}, err
	}
	return r.Context.context(), nil
}

// CreateContext starts a context of language in cwd ("" for the
// workspace); its kernel answers before this returns.
func (c *Code) CreateContext(ctx context.Context, language, cwd string, env map[string]string) (CodeContext, error) {
	l, err := codeLanguage(language)
	if err != nil {
		return CodeContext{}, err
	}
	body := map[string]any{"language": l}
	if cwd != "" {
		body["cwd"] = cwd
	}
	if len(env) > 0 {
		body["env"] = env
	}
	return c.one(ctx, "POST", "/code-contexts", body)
}

// ListContexts gives the sandbox's contexts.
func (c *Code) ListContexts(ctx context.Context) ([]CodeContext, error) {
	raw, err := c.call(ctx, "GET", "/code-contexts", nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		Contexts []wireContext `json:"contexts"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	out := make([]CodeContext, 0, len(r.Contexts))
	for _, w := range r.Contexts {
		out = append(out, w.context())
	}
	return out, nil
}

// RestartContext gives the context a fresh kernel: the state is gone, the
// ID stays.
func (c *Code) RestartContext(ctx context.Context, id string) (CodeContext, error) {
	return c.one(ctx, "POST", "/code-contexts/"+url.PathEscape(id)+":restart", map[string]any{})
}

// Interrupt interrupts the context's run (KeyboardInterrupt in Python).
func (c *Code) Interrupt(ctx context.Context, id string) error {
	_, err := c.call(ctx, "POST", "/code-contexts/"+url.PathEscape(id)+":interrupt", map[string]any{})
	return err
}

// DeleteContext stops the context's kernel and forgets it.
func (c *Code) DeleteContext(ctx context.Context, id string) error {
	_, err := c.call(ctx, "DELETE", "/code-contexts/"+url.PathEscape(id), nil)
	return err
}

// Run runs code and gathers its events; an error the code raises is
// Execution.Error, not an error of the call.
func (c *Code) Run(ctx context.Context, code string, o RunCodeOptions) (Execution, error) {
	body := map[string]any{"code": code}
	if o.Context != "" {
		body["contextId"] = o.Context
	}
	if o.Language != "" {
		l, err := codeLanguage(o.Language)
		if err != nil {
			return Execution{}, err
		}
		body["language"] = l
	}
	if o.TimeoutSeconds > 0 {
		body["timeout"] = seconds(o.TimeoutSeconds)
	}
	j, err := json.Marshal(body)
	if err != nil {
		return Execution{}, err
	}
	resp, err := c.s.c.do(ctx, "POST", c.s.path("/code:run"), bytes.NewReader(j),
		map[string]string{"Content-Type": "application/json"})
	if err != nil {
		return Execution{}, err
	}
	defer resp.Body.Close()
	var x Execution
	done := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			Error  json.RawMessage `json:"error"`
			Stdout *struct {
				Text string `json:"text"`
			} `json:"stdout"`
			Stderr *struct {
				Text string `json:"text"`
			} `json:"stderr"`
			Result *struct {
				Data         map[string]string `json:"data"`
				IsMainResult bool              `json:"isMainResult"`
			} `json:"result"`
			CodeError *struct {
				Name      string   `json:"name"`
				Value     string   `json:"value"`
				Traceback []string `json:"traceback"`
			} `json:"codeError"`
			Completed *struct {
				ExecutionCount int    `json:"executionCount"`
				Duration       string `json:"duration"`
				Interrupted    bool   `json:"interrupted"`
				TimedOut       bool   `json:"timedOut"`
			} `json:"completed"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return x, err
		}
		switch {
		case ev.Error != nil:
			return x, errorFrom(0, ev.Error, "")
		case ev.Stdout != nil:
			x.Stdout += ev.Stdout.Text
			if o.OnStdout != nil {
				o.OnStdout(ev.Stdout.Text)
			}
		case ev.Stderr != nil:
			x.Stderr += ev.Stderr.Text
			if o.OnStderr != nil {
				o.OnStderr(ev.Stderr.Text)
			}
		case ev.Result != nil:
			r := CodeResult{Data: ev.Result.Data, IsMainResult: ev.Result.IsMainResult}
			if r.Data == nil {
				r.Data = map[string]string{}
			}
			if r.IsMainResult {
				x.Text = r.Data["text/plain"]
			}
			x.Results = append(x.Results, r)
			if o.OnResult != nil {
				o.OnResult(r)
			}
		case ev.CodeError != nil:
			x.Error = &CodeError{Name: ev.CodeError.Name, Value: ev.CodeError.Value, Traceback: ev.CodeError.Traceback}
		case ev.Completed != nil:
			x.ExecutionCount = ev.Completed.ExecutionCount
			x.Duration, _ = time.ParseDuration(ev.Completed.Duration)
			x.Interrupted = ev.Completed.Interrupted
			x.TimedOut = ev.Completed.TimedOut
			done = true
		}
	}
	if err := sc.Err(); err != nil {
		return x, err
	}
	if !done {
		return x, &Error{Code: "UNKNOWN", Message: "the run ended without completing"}
	}
	return x, nil
}
