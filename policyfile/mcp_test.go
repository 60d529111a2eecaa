package policyfile_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// hintedTool is a tool that declares hints, as an MCP server's tools do
// (mcptools is another module); every call loses its answer after the
// request went out.
type hintedTool struct {
	name  string
	h     middleware.Hints
	calls int
}

func (h *hintedTool) Name() string            { return h.name }
func (h *hintedTool) Description() string     { return "An MCP tool." }
func (h *hintedTool) Hints() middleware.Hints { return h.h }
func (h *hintedTool) Call(context.Context, string) (string, error) {
	h.calls++
	return "", io.ErrUnexpectedEOF
}

// Issue 27: a policies file trusts an MCP server by the program's name for
// it (mcp_servers.NAME.trusted), and then its read-only hints loosen the
// side-effect guard; a server it does not trust stays untrusted; the file's
// own side_effects always wins.
func TestTheFileTrustsAnMCPServerByName(t *testing.T) {
	file := mustParse(t, `
defaults: {retries: 2, backoff: {base: 0, multiplier: 1}}
mcp_servers:
  files: {trusted: true}
  wiki: {trusted: false}
tools:
  set_read: {side_effects: none}
`)
	yes := true
	tools := []*hintedTool{
		{name: "trusted_read", h: middleware.Hints{ReadOnly: &yes, Server: "files"}},
		{name: "untrusted_read", h: middleware.Hints{ReadOnly: &yes, Server: "wiki"}},
		{name: "unnamed_read", h: middleware.Hints{ReadOnly: &yes}},
		{name: "set_read", h: middleware.Hints{Server: "wiki"}},
	}
	want := map[string]int{"trusted_read": 3, "untrusted_read": 1, "unnamed_read": 1, "set_read": 3}
	wrapped, err := file.WrapAll(tools[0], tools[1], tools[2], tools[3])
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wrapped {
		r := w.(*toolsafe.Tool).Run(context.Background(), `{}`)
		if r.Attempts != want[tools[i].name] || tools[i].calls != want[tools[i].name] {
			t.Errorf("%s: %d attempts, %d calls; want %d (%s)", tools[i].name, r.Attempts, tools[i].calls, want[tools[i].name],
				file.DescribeSideEffects(tools[i].name, &tools[i].h))
		}
	}
}

func TestMCPServersFieldProblems(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"mcp_servers:\n  files: {trustd: true}\n", `unknown field "trustd"`},
		{"mcp_servers:\n  files: {trusted: yes please}\n", "trusted"},
	} {
		if _, err := policyfile.Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want a problem saying %q", c.yaml, err, c.want)
		}
	}
}

// A program's name for an MCP server that the file's mcp_servers does not
// hold (a typo on either side) leaves the server untrusted: the reviewer's
// description says so, with the name it likely meant, instead of nothing.
func TestDescribeSaysWhenTheFileDoesNotNameTheServer(t *testing.T) {
	file := mustParse(t, "mcp_servers:\n  billing: {trusted: true}\n")
	yes := true
	got := file.DescribeSideEffects("get_invoice", &middleware.Hints{ReadOnly: &yes, Server: "bilIing"})
	if !strings.Contains(got, `server "bilIing" is not under mcp_servers; did you mean "billing"?`) {
		t.Errorf("DescribeSideEffects = %q; want it to say the file names no server bilIing, and suggest billing", got)
	}
	for _, server := range []string{"billing", "", "wiki"} {
		if got := file.DescribeSideEffects("get_invoice", &middleware.Hints{ReadOnly: &yes, Server: server}); strings.Contains(got, "not under mcp_servers") {
			t.Errorf("server %q: DescribeSideEffects = %q; want no note", server, got)
		}
	}
	if got := mustParse(t, "defaults: {retries: 1}\n").DescribeSideEffects("get_invoice", &middleware.Hints{Server: "bilIing"}); strings.Contains(got, "mcp_servers") {
		t.Errorf("a file without mcp_servers: %q; want no note", got)
	}
}
