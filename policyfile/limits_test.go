package policyfile_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/policyfile"
)

// allocated runs f and returns the bytes it allocated. Peak memory is at
// most that.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// limitedStack lets the goroutines of a test grow their stacks to 64 MiB
// at most, instead of 1 GiB: an input that made the parser recurse once
// per key or per level would crash the test binary instead of passing.
func limitedStack(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// The inputs of the open issue on composed guarantees, and the other
// shapes that made the YAML parser take gigabytes, minutes or the whole
// stack, are refused with a problem that names the limit, using little
// memory.
func TestFilesPastALimitAreRefusedWithAProblemThatNamesIt(t *testing.T) {
	limitedStack(t)
	tests := []struct {
		name string
		yaml func() string
		line int    // the line of the problem; 0 for none
		says string // a part of its message
		most uint64 // the most bytes Parse may allocate
	}{
		{
			name: "200 KB of nested [ (15 GB and 17 s before)",
			yaml: func() string { return "x-a: " + strings.Repeat("[", 200_000) },
			line: 1, says: "nests deeper than 32 levels here, the most a policies file may", most: 1 << 20,
		},
		{
			name: "a MiB of [ never closed (out of memory before)",
			yaml: func() string { return "x-a: " + strings.Repeat("[", policyfile.MaxSize-5) },
			line: 1, says: "nests deeper than 32 levels", most: 1 << 20,
		},
		{
			name: "a flat file of a MiB and one byte",
			yaml: func() string { return fill("tools:\n", "  t%d: {retries: 1}\n", "", -1) + "\n" },
			says: "the file holds more than 1048576 bytes (1 MiB), the most a policies file may", most: 1 << 20,
		},
		{
			name: "a valid file of 2.6 MB (2 minutes before)",
			yaml: func() string { return strings.Repeat("x-a: 1\n", 2_600_000/7) },
			says: "more than 1048576 bytes", most: 1 << 20,
		},
		{
			name: "mappings nested by indentation one level too deep",
			yaml: func() string { return nested(policyfile.MaxDepth + 1) },
			line: policyfile.MaxDepth + 1, says: "nests deeper than 32 levels", most: 1 << 20,
		},
		{
			name: "a MiB of - - - on one line",
			yaml: func() string { return "x-a:\n" + strings.Repeat("- ", policyfile.MaxSize/2-10) + "a\n" },
			line: 2, says: "nests deeper than 32 levels", most: 1 << 20,
		},
		{
			name: "flow lists one level too deep inside block mappings",
			yaml: func() string {
				return nested(policyfile.MaxDepth-3) + strings.Repeat(" ", policyfile.MaxDepth-3) + "x: [[[a]]]\n"
			},
			line: policyfile.MaxDepth - 2, says: "nests deeper than 32 levels", most: 1 << 20,
		},
		{
			name: "one block mapping of MaxEntries+1 keys",
			yaml: func() string { return blockMappings(1, policyfile.MaxEntries+1) },
			line: policyfile.MaxEntries + 2, says: "the mapping here has more than 5000 keys", most: 256 << 20,
		},
		{
			name: "block mappings whose keys squared add up past the budget",
			yaml: func() string { return blockMappings(3, 4500) },
			says: "the squares of their numbers of keys add up to more than 2×5000²", most: 256 << 20,
		},
		{
			name: "a MiB of empty list entries",
			yaml: func() string { return fill("x-l:\n", "-\n", "", 0) },
			says: "too many empty values (a key or a - with nothing after it)", most: 512 << 20,
		},
		{
			name: "nine document markers",
			yaml: func() string { return strings.Repeat("---\n", 9) },
			line: 9, says: "more than 8 document markers (---)", most: 1 << 20,
		},
		// The scan of the raw bytes can be misled about where a quote
		// begins; the lexer's tokens, which the parser reads, cannot.
		{
			name: "a quote that the parser reads as plain text hides brackets from the byte scan",
			yaml: func() string { return "a: b\n  \"x: " + strings.Repeat("[", policyfile.MaxSize-20) + "\n" },
			says: "nests deeper than 32 levels", most: 512 << 20,
		},
		{
			name: "a quote on the next line of a flow list",
			yaml: func() string { return "x: [a,\n b\n \"" + strings.Repeat("[", policyfile.MaxSize-20) + "\n" },
			says: "nests deeper than 32 levels", most: 512 << 20,
		},
		{
			name: "quotes that close on the next line, one bracket each",
			yaml: func() string { return fill("x-l:\n", "- [\"\n]\"\n", "", 0) },
			says: "nests deeper than 32 levels", most: 512 << 20,
		},
		{
			name: "aliases of one large anchor expand past the budget of values",
			yaml: func() string {
				big := "x-big: &big [" + strings.Repeat("a, ", 100_000) + "a]\n"
				return big + "tools:\n  t:\n    args_schema: {type: object, enum: [" + strings.Repeat("*big, ", 20) + "*big]}\n"
			},
			line: 4, says: "the file expands to more than 1048576 values through its aliases", most: 1 << 30,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.yaml())
			var err error
			n := allocated(func() { _, err = policyfile.Parse(data) })
			var pe *policyfile.Error
			if !errors.As(err, &pe) || len(pe.Problems) != 1 {
				t.Fatalf("Parse of %d bytes = %v; want one problem", len(data), err)
			}
			if p := pe.Problems[0]; !strings.Contains(p.Message, tt.says) || (tt.line != 0 && p.Line != tt.line) {
				t.Errorf("problem at line %d: %s\nwant line %d: …%s…", p.Line, p.Message, tt.line, tt.says)
			}
			if n > tt.most {
				t.Errorf("Parse of %d bytes allocated %d MiB; want at most %d MiB", len(data), n>>20, tt.most>>20)
			}
		})
	}
}

// Files at the limits are accepted: each limit counts as documented, the
// raw bytes and the lexer's tokens alike.
func TestFilesAtALimitAreAccepted(t *testing.T) {
	limitedStack(t)
	tests := []struct {
		name string
		yaml string
	}{
		{"MaxDepth levels by indentation", nested(policyfile.MaxDepth)},
		{"MaxDepth levels by brackets", "x-a: " + strings.Repeat("[", policyfile.MaxDepth-1) + strings.Repeat("]", policyfile.MaxDepth-1) + "\n"},
		{"MaxDepth levels of JSON", strings.Repeat(`{"x-a":`, policyfile.MaxDepth) + "1" + strings.Repeat("}", policyfile.MaxDepth)},
		{"MaxDepth levels of - - -", "x-a:\n" + strings.Repeat("- ", policyfile.MaxDepth-1) + "a\n"},
		{"MaxDepth levels, brackets inside indentation", nested(policyfile.MaxDepth-3) + strings.Repeat(" ", policyfile.MaxDepth-3) + "x: [[a]]\n"},
		{"brackets in quotes, comments, block text and plain text do not count", "x-a: \"" + strings.Repeat("[", 100) + "\"\n" +
			"x-b: '" + strings.Repeat("{", 100) + "'\n# " + strings.Repeat("[", 100) + "\n" +
			"x-c: |\n  " + strings.Repeat("[", 100) + "\n  \"" + strings.Repeat("[", 100) + "\n" +
			"x-d: a" + strings.Repeat("[", 100) + "\n"},
		{"MaxEntries keys in one block mapping", blockMappings(1, policyfile.MaxEntries)},
		{"a file of MaxSize bytes", fill("x-l: [", "a, ", "a]\n", 0)},
		{"4000 tools with empty entries, the defaults", emptyTools(4000)},
		{"eight document markers around one document", "---\ntools: {}\n" + strings.Repeat("---\n", 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := policyfile.Parse([]byte(tt.yaml)); err != nil {
				t.Errorf("Parse = %v", err)
			}
		})
	}
}

// The shapes near the limits that are hardest for the YAML parser are read
// with bounded memory and stack (BenchmarkParse shows their time).
func TestTheHardestAcceptedShapesUseBoundedMemory(t *testing.T) {
	limitedStack(t)
	for _, s := range nearLimits {
		t.Run(s.name, func(t *testing.T) {
			data := []byte(s.yaml())
			var err error
			start := time.Now()
			n := allocated(func() { _, err = policyfile.Parse(data) })
			if err != nil {
				t.Fatalf("Parse of %d bytes: %v", len(data), err)
			}
			if n > 1<<30 {
				t.Errorf("Parse of %d bytes allocated %d MiB; want at most 1 GiB", len(data), n>>20)
			}
			t.Logf("%d KiB: %v, %d MiB allocated", len(data)>>10, time.Since(start).Round(time.Millisecond), n>>20)
		})
	}
}

// emptyTools is a file of n tools with empty entries.
func emptyTools(n int) string {
	var b strings.Builder
	b.WriteString("tools:\n")
	for i := range n {
		fmt.Fprintf(&b, "  t%d:\n", i)
	}
	return b.String()
}

// endless is a file that never ends, as /dev/zero.
type endless struct{}

func (endless) Open(string) (fs.File, error) { return endless{}, nil }
func (endless) Stat() (fs.FileInfo, error)   { return nil, errors.New("no stat") }
func (endless) Close() error                 { return nil }
func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

var _ io.Reader = endless{}

func TestLoadReadsNoMoreThanMaxSize(t *testing.T) {
	t.Run("a sparse file of 100 MB", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "huge.yaml")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 100<<20); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, err = policyfile.Load(path) })
		if err == nil || !strings.Contains(err.Error(), path+": the file holds more than 1048576 bytes") {
			t.Errorf("Load = %v; want the size problem", err)
		}
		if n > 8<<20 {
			t.Errorf("Load allocated %d MiB; want it to read little more than a MiB", n>>20)
		}
	})
	t.Run("a file that never ends", func(t *testing.T) {
		_, err := policyfile.LoadFS(endless{}, "zero")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("zero: the file holds more than %d bytes", policyfile.MaxSize)) {
			t.Errorf("LoadFS = %v; want the size problem", err)
		}
	})
}

// A file of many names whose every tool names a dependency that is not
// there gets a problem for each, in little time and memory: a problem lists
// ten names at most, and the name meant is looked for only among a
// thousand names at most, in the first hundred problems.
func TestManyProblemsAboutManyNamesStaySmall(t *testing.T) {
	const n = 20_000
	var b strings.Builder
	b.WriteString("dependencies: {")
	for i := range n {
		fmt.Fprintf(&b, "d%d: {}, ", i)
	}
	b.WriteString("}\ntools: {")
	for i := range n {
		fmt.Fprintf(&b, "t%d: {dependency: e%d}, ", i, i)
	}
	b.WriteString("}\n")
	var err error
	mem := allocated(func() { _, err = policyfile.Parse([]byte(b.String())) })
	var pe *policyfile.Error
	if !errors.As(err, &pe) || len(pe.Problems) != n {
		t.Fatalf("Parse gave %d problems; want %d", len(pe.Problems), n)
	}
	if want := `unknown dependency "e0": declare it under dependencies, or use one of d0, d1, d2, d3, d4, d5, d6, d7, d8, d9 and 19990 more`; pe.Problems[0].Message != want {
		t.Errorf("the first problem: %s\nwant %s", pe.Problems[0].Message, want)
	}

	// 200 tools of the file missing from the names given: the first
	// hundred problems say which name was meant.
	var file strings.Builder
	file.WriteString("tools: {")
	var given []string
	for i := range 200 {
		fmt.Fprintf(&file, "t%d: {}, ", i)
		given = append(given, fmt.Sprintf("u%d", i))
	}
	file.WriteString("}\n")
	f, err := policyfile.Parse([]byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.As(f.CheckTools(given...), &pe) || len(pe.Problems) != 200 {
		t.Fatalf("CheckTools gave %v; want 200 problems", err)
	}
	for i, p := range pe.Problems {
		if got, want := strings.Contains(p.Message, "did you mean"), i < 100; got != want {
			t.Errorf("problem %d looked for the name meant: %v; want %v: %s", i+1, got, want, p.Message)
		}
	}
	if mem > 512<<20 {
		t.Errorf("Parse allocated %d MiB; want at most 512", mem>>20)
	}
}
