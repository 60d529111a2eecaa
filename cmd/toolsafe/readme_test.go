package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README's files and what toolsafe prints for them. A block after
//
//	<!-- file: NAME -->
//
// is the file NAME; a block after
//
//	<!-- output of: toolsafe ARGS[; NAME with "OLD" as "NEW"]... -->
//
// is what toolsafe ARGS prints (standard output, then standard error) in a
// directory holding the README's files, the edits applied to a copy of
// each NAME. A line "..." in an output stands for any lines.

var (
	fileMarkerRE   = regexp.MustCompile(`^<!-- file: (\S+) -->$`)
	outputMarkerRE = regexp.MustCompile(`^<!-- output of: toolsafe (.+) -->$`)
	editRE         = regexp.MustCompile(`^(\S+) with ("(?:[^"\\]|\\.)*") as ("(?:[^"\\]|\\.)*")$`)
)

// readmeBlock is the fenced block after a marker line of the README.
type readmeBlock struct {
	marker []string // the marker's submatches
	line   int      // the marker's line
	text   string
}

// readmeBlocks returns the blocks of readme that follow a line matching re.
func readmeBlocks(t *testing.T, readme string, re *regexp.Regexp) []readmeBlock {
	t.Helper()
	lines := strings.Split(readme, "\n")
	var out []readmeBlock
	for i, l := range lines {
		m := re.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			t.Fatalf("README.md:%d: the marker is not followed by a fenced block", i+1)
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		out = append(out, readmeBlock{marker: m, line: i + 1, text: strings.Join(body, "\n") + "\n"})
	}
	return out
}

// Issue 31, item 5: the README's typo example said 7:5 where toolsafe
// check prints 7:52 for the same file. Every output the README shows of
// toolsafe is what it prints for the README's files, and each policies
// file the README shows is valid.
func TestTheREADMEShowsWhatToolsafePrints(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, b := range readmeBlocks(t, string(readme), fileMarkerRE) {
		files[b.marker[1]] = b.text
	}
	if files["policies.yaml"] == "" {
		t.Fatal("the README shows no <!-- file: policies.yaml -->")
	}
	outputs := readmeBlocks(t, string(readme), outputMarkerRE)
	if len(outputs) < 4 {
		t.Fatalf("the README shows %d outputs of toolsafe; want the check, the typo, describe and -mcp", len(outputs))
	}
	for _, b := range outputs {
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			dir := t.TempDir()
			parts := strings.Split(b.marker[1], "; ")
			edited := map[string]string{}
			for name, text := range files {
				edited[name] = text
			}
			for _, e := range parts[1:] {
				m := editRE.FindStringSubmatch(e)
				if m == nil {
					t.Fatalf("%q is not NAME with \"OLD\" as \"NEW\"", e)
				}
				old, _ := strconv.Unquote(m[2])
				repl, _ := strconv.Unquote(m[3])
				if strings.Count(edited[m[1]], old) != 1 {
					t.Fatalf("%s holds %q %d times; want once", m[1], old, strings.Count(edited[m[1]], old))
				}
				edited[m[1]] = strings.Replace(edited[m[1]], old, repl, 1)
			}
			for name, text := range edited {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var stdout, stderr strings.Builder
			run(strings.Fields(parts[0]), strings.NewReader(""), &stdout, &stderr)
			if err := matchLines(b.text, stdout.String()+stderr.String()); err != nil {
				t.Errorf("README.md:%d shows for toolsafe %s:\n%s\nit prints:\n%s%s\n(%v)", b.line, b.marker[1], b.text, stdout.String(), stderr.String(), err)
			}
		})
	}
	for name := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			if err := os.WriteFile(name, []byte(files[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr strings.Builder
			if status := run([]string{"check", name}, strings.NewReader(""), &stdout, &stderr); status != exitValid {
				t.Errorf("the README's %s is not valid:\n%s", name, stderr.String())
			}
		})
	}
}

// matchLines reports how got differs from want, line by line, where a line
// "..." of want stands for any lines of got (none included).
func matchLines(want, got string) error {
	w := strings.Split(strings.TrimRight(want, "\n"), "\n")
	g := strings.Split(strings.TrimRight(got, "\n"), "\n")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		switch {
		case i == len(w):
			return j == len(g)
		case w[i] == "...":
			for k := j; k <= len(g); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		case j < len(g) && w[i] == g[j]:
			return match(i+1, j+1)
		}
		return false
	}
	if !match(0, 0) {
		return fmt.Errorf("the lines differ")
	}
	return nil
}
