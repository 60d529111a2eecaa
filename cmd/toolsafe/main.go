// Command toolsafe checks toolsafe policies files before anything runs, and
// describes the layers each tool gets from one.
//
//	toolsafe check [-tools name,...] [-mcp NAME=TOOLS.json]... FILE...
//	toolsafe describe [-mcp NAME=TOOLS.json]... FILE [TOOL...]
//	toolsafe version
//	toolsafe help
//	toolsafe approvals
//
// check reads each file as policyfile.Load does ("-" reads standard
// input) and, when it is valid, prints each dependency and, per tool, its
// effective chain of layers, outermost first:
//
//	fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → breaker billing → bulkhead billing(8) → timeout 2s
//
// When a file is not valid it prints every problem, one a line, as
// FILE:LINE:COLUMN: FIELD: MESSAGE. With -tools, the comma-separated names
// of the agent's tools, it also checks the file against them as
// policyfile.File.CheckTools does: that every tool the file names is one of
// them, that every fallback names one, and that no two collide. What only
// the program knows, such as the approver of the tools that need
// approval, or the store of a dependency with shared: redis, is not
// checked. With -mcp NAME=TOOLS.json, once per MCP server, TOOLS.json the
// server's tools/list result saved as JSON and NAME the program's name for
// the server (mcptools.WithServerName), it prints, per MCP tool, its
// side-effect class and where it came from
// (policyfile.File.DescribeSideEffects); with -tools too, the MCP tools
// are among the agent's tools the file is checked against:
//
//	delete_file: surface → retry 2 (500ms..30s ×2 +25%) → tool delete_file
//	  MCP (files): side effects not_idempotent (default); approval candidate: destructive (default), not gated: set approval: every_attempt to gate it
//
// Flags may come before or after the files.
//
// describe prints the chain of layers of each TOOL named, one a line, as
// policyfile.File.Describe gives it, whether the file names the tool or
// not (then it gets the defaults, and the line says so); without a TOOL,
// of every tool the file names and of any other tool:
//
//	toolsafe describe policies.yaml refund
//	refund: surface → deadline 30s → retry 2 (500ms..30s ×2 +25%; same idempotency key) → approval every attempt → timeout 10s → tool refund
//
// With -mcp, as for check, an MCP tool's line is followed by its side
// effects. A file that is not valid is reported as check reports it.
//
// approvals says where the approvals command is: it works on a fleet's
// Redis, so it lives in redisstore's module, as
// github.com/toolsafe/toolsafe/redisstore/cmd/toolsafe-approvals (this
// module requires no Redis client).
//
// The exit status of check and describe is 0 when every file is valid, 1
// when one is not, 2 when the command is misused, and 3 when a file could
// not be checked (it could not be read, or the output could not be
// written), whatever the other files gave. Run it without installing:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// The exit statuses.
const (
	exitValid    = 0 // every file is valid
	exitInvalid  = 1 // a file has problems
	exitUsage    = 2 // the command was misused
	exitCantTell = 3 // a file could not be read, or the output not written
)

const usage = `toolsafe checks toolsafe policies files and describes what each tool gets.

Usage:
  toolsafe check [-tools name,...] [-mcp NAME=TOOLS.json]... FILE...
                                             check files ("-" for standard input);
                                             print each tool's chain of layers
                                             (and an MCP tool's side effects)
  toolsafe describe [-mcp NAME=TOOLS.json]... FILE [TOOL...]
                                             print the chain of layers of each
                                             TOOL (or of every tool) of FILE
  toolsafe version                           print the version of toolsafe
  toolsafe help                              print this help
  toolsafe approvals                         where to list and decide approvals
                                             (a command of redisstore's module)

Exit status: 0 when every file is valid, 1 when one is not, 2 on a usage
error, 3 when a file could not be checked (it could not be read, or the
output could not be written).
`

const checkUsage = `Usage: toolsafe check [-tools name,...] [-mcp NAME=TOOLS.json]... FILE...

Checks each policies file ("-" reads standard input) and prints, when it is
valid, its dependencies and each tool's chain of layers, outermost first;
when it is not, every problem as FILE:LINE:COLUMN: FIELD: MESSAGE. Flags may
come before or after the files.

  -tools name,...   the names of the agent's tools: also check that every
                    tool the file names is one of them, that every fallback
                    names one, and that no two collide (the approver of the
                    tools that need approval and the store of a shared
                    dependency come from code: not checked)
  -mcp NAME=FILE    an MCP server's tools/list result saved as JSON, NAME the
                    program's name for the server (mcptools.WithServerName);
                    once per server: print each of its tools' side-effect
                    class and where it came from (setting, hint, trusted
                    hint, default); with -tools, its tools are among the
                    agent's tools too

Exit status: 0 when every file is valid, 1 when one is not, 2 on a usage
error, 3 when a file could not be checked.
`

const describeUsage = `Usage: toolsafe describe [-mcp NAME=TOOLS.json]... FILE [TOOL...]

Prints the chain of layers, outermost first, that each TOOL gets from the
policies file FILE ("-" reads standard input), one a line; a tool the file
does not name gets the defaults, and its line says so. Without a TOOL, it
prints every tool the file names and "any other tool". A file that is not
valid is reported as check reports it. Flags may come before or after the
arguments.

  -mcp NAME=FILE    an MCP server's tools/list result saved as JSON, NAME the
                    program's name for the server (mcptools.WithServerName);
                    once per server: follow each of its tools' lines with its
                    side-effect class and where it came from; without a
                    TOOL, print its tools too

Exit status: 0 when the file is valid, 1 when it is not, 2 on a usage
error, 3 when it could not be read.
`

// approvalsUsage points at the approvals command, which needs go-redis.
const approvalsUsage = `toolsafe approvals lists and decides the calls waiting for approval in a
fleet's Redis. It needs a Redis client, which this module does not require,
so it is a command of redisstore's module. Add it to your module as a tool:

  go get -tool github.com/toolsafe/toolsafe/redisstore/cmd/toolsafe-approvals@latest
  go tool toolsafe-approvals [-redis ADDR] list
  go tool toolsafe-approvals [-as USER] approve [-comment TEXT] ID
  go tool toolsafe-approvals deny [-comment TEXT] ID
  go tool toolsafe-approvals audit [-n N]

In a clone of toolsafe: go run -C redisstore ./cmd/toolsafe-approvals list.
For a program's in-memory approvals, serve package inbox's page.
`

// stdinName is how problems and results name standard input.
const stdinName = "<stdin>"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command with args (without the program name) and returns
// the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	out := &errWriter{w: stdout}
	status := exitValid
	switch args[0] {
	case "check":
		status = check(args[1:], stdin, out, stderr)
	case "describe":
		status = describe(args[1:], stdin, out, stderr)
	case "version":
		switch {
		case len(args) == 1:
			fmt.Fprintln(out, "toolsafe", version(), runtime.Version())
		case len(args) == 2 && isHelp(args[1]):
			fmt.Fprint(out, usage)
		default:
			fmt.Fprintln(stderr, "toolsafe version takes no arguments")
			return exitUsage
		}
	case "approvals":
		fmt.Fprint(stderr, approvalsUsage)
		return exitUsage
	case "help", "-h", "-help", "--help":
		fmt.Fprint(out, usage)
	default:
		fmt.Fprintf(stderr, "toolsafe: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	if out.err != nil && status != exitUsage {
		fmt.Fprintf(stderr, "toolsafe: writing the output: %v\n", out.err)
		return exitCantTell
	}
	return status
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

func check(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolsafe check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, to stdout for -h
	toolList := fs.String("tools", "", "")
	var mcp mcpList
	fs.Var(&mcp, "mcp", "")
	files, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, checkUsage)
		return exitValid
	case err != nil:
		fmt.Fprintf(stderr, "\n%s", checkUsage)
		return exitUsage
	case len(files) == 0:
		fmt.Fprintf(stderr, "toolsafe check: no file to check\n\n%s", checkUsage)
		return exitUsage
	}
	if n := countOf(files, "-"); n > 1 {
		fmt.Fprintf(stderr, "toolsafe check: - (standard input) is given %d times; it can be read once\n", n)
		return exitUsage
	}
	// The agent's tools, when -tools names them: the file is checked
	// against them and the MCP tools. Without -tools, the MCP tools are
	// only described: the agent may have others.
	var names []string
	for _, n := range strings.Split(*toolList, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	agentTools := *toolList != ""
	for _, t := range mcp.tools {
		names = append(names, t.name)
	}
	status := exitValid
	for i, path := range files {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		switch checkFile(path, names, agentTools, mcp.tools, stdin, stdout, stderr) {
		case exitCantTell:
			status = exitCantTell
		case exitInvalid:
			if status == exitValid {
				status = exitInvalid
			}
		}
	}
	return status
}

// parseInterleaved parses args with fs, letting flags come after the
// files too, and returns the files. After "--" every argument is a file.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(files, rest...), nil
		}
		if len(rest) == 0 {
			return files, nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// checkFile checks one file, against the tools names when they are the
// agent's (-tools), prints the chains of the file's tools and of names, and
// returns exitValid, exitInvalid or exitCantTell.
func checkFile(path string, names []string, agentTools bool, mcpTools []mcpTool, stdin io.Reader, stdout, stderr io.Writer) int {
	var against []string
	if agentTools {
		against = names
	}
	file, status := loadValid(path, against, stdin, stderr)
	if file == nil {
		return status
	}
	if path == "-" {
		path = stdinName
	}
	toolNames, deps := file.Tools(), file.Dependencies()
	fmt.Fprintf(stdout, "%s: valid: %d tool%s, %d dependenc%s\n",
		path, len(toolNames), plural(len(toolNames)), len(deps), map[bool]string{true: "y", false: "ies"}[len(deps) == 1])
	if len(deps) > 0 {
		fmt.Fprintln(stdout, "\ndependencies:")
		for _, d := range deps {
			fmt.Fprintf(stdout, "  %s: %s\n", d, file.DescribeDependency(d))
		}
	}
	fmt.Fprintln(stdout, "\ntools, outermost layer first:")
	hints := hintsOf(mcpTools)
	for _, n := range toolNames {
		describeTool(stdout, "  ", file, n, hints)
	}
	for _, n := range names {
		if !slices.Contains(toolNames, n) {
			describeTool(stdout, "  ", file, n, hints)
		}
	}
	fmt.Fprintf(stdout, "  any other tool (the defaults): %s\n", defaultChain(file))
	return exitValid
}

// loadValid loads the file at path ("-": stdin) and checks it against the
// agent's tools names, when given. When it is not valid, or cannot be
// read, it reports why on stderr and returns a nil file and exitInvalid or
// exitCantTell.
func loadValid(path string, names []string, stdin io.Reader, stderr io.Writer) (*policyfile.File, int) {
	file, err := load(path, stdin)
	if path == "-" {
		path = stdinName
	}
	if err == nil && names != nil {
		err = file.CheckTools(names...)
	}
	if err == nil {
		return file, exitValid
	}
	var pe *policyfile.Error
	if !errors.As(err, &pe) {
		fmt.Fprintf(stderr, "%s: could not be checked: %v\n", path, err)
		return nil, exitCantTell
	}
	for _, p := range pe.Problems {
		fmt.Fprintln(stderr, p.Format(path))
	}
	fmt.Fprintf(stderr, "%s: %d problem%s\n", path, len(pe.Problems), plural(len(pe.Problems)))
	return nil, exitInvalid
}

// describeTool writes the line of tool n, its chain of layers, and when it
// is an MCP tool of hints, the line of its side effects.
func describeTool(w io.Writer, indent string, file *policyfile.File, n string, hints map[string]*middleware.Hints) {
	label := n
	if !slices.Contains(file.Tools(), n) {
		label += " (not in the file: the defaults)"
	}
	fmt.Fprintf(w, "%s%s: %s\n", indent, label, file.Describe(n))
	if h := hints[n]; h != nil {
		fmt.Fprintf(w, "%s  MCP (%s): %s\n", indent, h.Server, file.DescribeSideEffects(n, h))
	}
}

// defaultChain is the chain of a tool the file does not name, without a
// tool's name.
func defaultChain(file *policyfile.File) string {
	return strings.TrimSuffix(file.Describe("\x00"), " \x00")
}

func hintsOf(mcpTools []mcpTool) map[string]*middleware.Hints {
	hints := map[string]*middleware.Hints{}
	for i := range mcpTools {
		hints[mcpTools[i].name] = &mcpTools[i].hints
	}
	return hints
}

// describe is toolsafe describe: the chains of the tools named, or of all.
func describe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolsafe describe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var mcp mcpList
	fs.Var(&mcp, "mcp", "")
	rest, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, describeUsage)
		return exitValid
	case err != nil:
		fmt.Fprintf(stderr, "\n%s", describeUsage)
		return exitUsage
	case len(rest) == 0:
		fmt.Fprintf(stderr, "toolsafe describe: no file to describe\n\n%s", describeUsage)
		return exitUsage
	}
	path, names := rest[0], rest[1:]
	if slices.Contains(names, "-") {
		fmt.Fprintf(stderr, "toolsafe describe: - (standard input) can only be the file, the first argument; after it come the names of tools\n\n%s", describeUsage)
		return exitUsage
	}
	file, status := loadValid(path, nil, stdin, stderr)
	if file == nil {
		return status
	}
	hints := hintsOf(mcp.tools)
	if len(names) > 0 {
		for _, n := range names {
			describeTool(stdout, "", file, n, hints)
		}
		return exitValid
	}
	for _, n := range file.Tools() {
		describeTool(stdout, "", file, n, hints)
	}
	for _, t := range mcp.tools {
		if !slices.Contains(file.Tools(), t.name) {
			describeTool(stdout, "", file, t.name, hints)
		}
	}
	fmt.Fprintf(stdout, "any other tool (the defaults): %s\n", defaultChain(file))
	return exitValid
}

// load reads the file at path, or standard input for "-", reading no more
// than a byte past policyfile.MaxSize.
func load(path string, stdin io.Reader) (*policyfile.File, error) {
	if path != "-" {
		return policyfile.Load(path)
	}
	data, err := io.ReadAll(io.LimitReader(stdin, policyfile.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return policyfile.Parse(data)
}

// errWriter remembers the first error writing to w, and writes nothing
// after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// version is the module version the binary was built from: a tag such as
// v0.3.0 when installed or run with @version, else (devel) and the VCS
// revision when known.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	if v == "(devel)" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return v
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
