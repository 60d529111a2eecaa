// Command toolsafe checks toolsafe policies files before anything runs.
//
//	toolsafe check [-tools name,...] FILE...
//	toolsafe version
//
// check reads each file as policyfile.Load does and, when it is valid,
// prints each dependency and, per tool, its effective chain of layers,
// outermost first:
//
//	fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → breaker billing → bulkhead billing(8) → timeout 2s
//
// When a file is not valid it prints every problem, one a line, as
// FILE:LINE:COLUMN: FIELD: MESSAGE. With -tools, the comma-separated names
// of the agent's tools, it also checks what File.WrapAll would: that every
// tool the file names is one of them, and every fallback names one.
//
// The exit status is 0 when every file is valid, 1 when one is not, 2 when
// the command is misused. Run it without installing:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

const usage = `toolsafe checks toolsafe policies files.

Usage:
  toolsafe check [-tools name,...] FILE...   check files; print each tool's chain of layers
  toolsafe version                           print the version of toolsafe
  toolsafe help                              print this help

Exit status: 0 when every file is valid, 1 when one is not, 2 on a usage error.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command with args (without the program name) and returns
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	case "version":
		if len(args) > 1 {
			fmt.Fprintln(stderr, "toolsafe version takes no arguments")
			return 2
		}
		fmt.Fprintln(stdout, "toolsafe", version(), runtime.Version())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "toolsafe: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toolsafe check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	toolList := fs.String("tools", "", "comma-separated names of the agent's tools: also check the file names only these")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: toolsafe check [-tools name,...] FILE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	var names []string
	for _, n := range strings.Split(*toolList, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	status := 0
	for i, path := range fs.Args() {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if !checkFile(path, names, stdout, stderr) {
			status = 1
		}
	}
	return status
}

// checkFile checks one file and reports whether it is valid.
func checkFile(path string, names []string, stdout, stderr io.Writer) bool {
	cfg, err := policyfile.Load(path)
	if err == nil && names != nil {
		_, err = cfg.WrapAll(stubs(names)...)
	}
	if err != nil {
		var ce *policyfile.Error
		if !errors.As(err, &ce) {
			fmt.Fprintln(stderr, err)
			return false
		}
		for _, p := range ce.Problems {
			fmt.Fprintln(stderr, p.Format(path))
		}
		fmt.Fprintf(stderr, "%s: %d problem%s\n", path, len(ce.Problems), plural(len(ce.Problems)))
		return false
	}

	toolNames, deps := cfg.Tools(), cfg.Dependencies()
	fmt.Fprintf(stdout, "%s: valid: %d tool%s, %d dependenc%s\n",
		path, len(toolNames), plural(len(toolNames)), len(deps), map[bool]string{true: "y", false: "ies"}[len(deps) == 1])
	if len(deps) > 0 {
		fmt.Fprintln(stdout, "\ndependencies:")
		for _, d := range deps {
			fmt.Fprintf(stdout, "  %s: %s\n", d, cfg.DescribeDependency(d))
		}
	}
	fmt.Fprintln(stdout, "\ntools, outermost layer first:")
	for _, n := range toolNames {
		fmt.Fprintf(stdout, "  %s: %s\n", n, cfg.Describe(n))
	}
	for _, n := range names {
		if !slices.Contains(toolNames, n) {
			fmt.Fprintf(stdout, "  %s (not in the file: the defaults): %s\n", n, cfg.Describe(n))
		}
	}
	fmt.Fprintf(stdout, "  any other tool (the defaults): %s\n", cfg.Describe("\x00"))
	return true
}

// stubs are tools with the given names, for WrapAll to check the file
// against; they are never called.
func stubs(names []string) []tools.Tool {
	ts := make([]tools.Tool, len(names))
	for i, n := range names {
		ts[i] = middleware.Func(n, "", func(context.Context, string) (string, error) { return "", nil })
	}
	return ts
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
