// Code contexts through the Go SDK against a live `talon up`.
package talon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func TestCodeContexts(t *testing.T) {
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Create(ctx, talon.CreateOptions{Template: "host"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), s.ID())
	code := s.Code()
	js, err := code.CreateContext(ctx, "javascript", "/tmp", nil)
	if err != nil || js.Language != "javascript" || js.Cwd != "/tmp" {
		t.Fatalf("%+v %v", js, err)
	}
	var out string
	x, err := code.Run(ctx, "const v = 5; console.log(process.cwd()); v * 3",
		talon.RunCodeOptions{Context: js.ID, OnStdout: func(s string) { out += s }})
	if err != nil || x.Text != "15" || out != "/tmp\n" || x.ExecutionCount != 1 {
		t.Fatalf("%+v %q %v", x, out, err)
	}
	if x, err = code.Run(ctx, "v + 1", talon.RunCodeOptions{Context: js.ID}); err != nil || x.Text != "6" {
		t.Fatalf("state is kept: %+v %v", x, err)
	}
	if x, _ = code.Run(ctx, "throw new RangeError('nope')", talon.RunCodeOptions{Context: js.ID}); x.Error == nil ||
		x.Error.Name != "RangeError" || x.Error.Value != "nope" {
		t.Fatalf("%+v", x)
	}
	x, err = code.Run(ctx, "echo $((6 * 7)); echo e >&2", talon.RunCodeOptions{Language: "bash"})
	if err != nil || x.Stdout != "42\n" || x.Stderr != "e\n" {
		t.Fatalf("%+v %v", x, err)
	}
	list, err := code.ListContexts(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	if err := code.DeleteContext(ctx, js.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := code.Run(ctx, "1", talon.RunCodeOptions{Context: js.ID}); !errors.Is(err, talon.ErrNotFound) {
		t.Fatalf("a deleted context: %v", err)
	}
	if _, err := code.CreateContext(ctx, "cobol", "", nil); !errors.Is(err, talon.ErrInvalidArgument) {
		t.Fatalf("an unknown language: %v", err)
	}
}
