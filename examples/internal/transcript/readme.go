package transcript

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// The README shows what the examples print, each block after a line
//
//	<!-- output of: COMMAND -->
//
// READMEBlocks finds them, and MatchREADME holds a program's output to
// one: the block's lines appear in the output in order, a line "..."
// standing for any lines (and the block may begin and end anywhere in the
// output), with what changes from run to run (durations, the model's random
// call IDs, ports, process IDs, MCP session IDs, run IDs, the numbers of
// calls, which end in any order when they run at once) taken as equal.

// READMEBlocks returns the blocks that README.md at path shows as the output
// of command.
func READMEBlocks(path, command string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	marker := "<!-- output of: " + command + " -->"
	lines := strings.Split(string(data), "\n")
	var blocks []string
	for i, l := range lines {
		if strings.TrimSpace(l) != marker {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```" {
			return nil, fmt.Errorf("%s:%d: %s is not followed by a ``` block", path, i+1, marker)
		}
		var b []string
		for j := i + 2; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			b = append(b, lines[j])
		}
		blocks = append(blocks, strings.Join(b, "\n"))
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s shows no %s", path, marker)
	}
	return blocks, nil
}

// varying are what changes from run to run, each with what it reads as.
var varying = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\b(\d+(\.\d+)?(h|ms|µs|us|ns|m|s))+\b`), "<duration>"},
	{regexp.MustCompile(`\bcall_[0-9a-f]{16}\b`), "call_<id>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<port>"},
	{regexp.MustCompile(`\bpid \d+`), "pid <pid>"},
	{regexp.MustCompile(`mcp\.session\.id=\S+`), "mcp.session.id=<id>"},
	{regexp.MustCompile(`-[0-9a-f]{8}\b`), "-<id>"},
	// The calls of one turn run at once, and are numbered as they end.
	{regexp.MustCompile(`^\[\d+\] `), "[<n>] "},
}

func normalize(line string) string {
	for _, v := range varying {
		line = v.re.ReplaceAllString(line, v.repl)
	}
	return strings.TrimRight(line, " ")
}

// MatchREADME returns an error saying which line of block the output got
// lacks, or nil.
func MatchREADME(block, got string) error {
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	out := strings.Split(got, "\n")
	for i := range out {
		out[i] = normalize(out[i])
	}
	// Runs of lines between "..." must appear in order, each run on
	// consecutive lines.
	var runs [][]string
	cur := []string{}
	for _, l := range want {
		if strings.TrimSpace(l) == "..." {
			runs = append(runs, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, normalize(l))
	}
	runs = append(runs, cur)
	at := 0
	for _, run := range runs {
		if len(run) == 0 {
			continue
		}
		found := -1
		for k := at; k+len(run) <= len(out); k++ {
			if equal(out[k:k+len(run)], run) {
				found = k
				break
			}
		}
		if found < 0 {
			return errors.New("the output lacks these lines of the README, in this order after the ones before:\n" + strings.Join(run, "\n"))
		}
		at = found + len(run)
	}
	return nil
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
