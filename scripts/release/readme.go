package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The README's Go blocks compile. Each ```go block of README.md follows a
// marker line naming the code around it:
//
//	<!-- go: NAME -->
//	```go
//	...
//	```
//
// where scripts/release/testdata/readme/NAME.go is a Go file of package
// NAME with the line "// README snippet" where the block goes: inside a
// function for a fragment of statements (the function's parameters are
// what the block uses but does not declare, such as the reader's ctx or
// llm), at the top level for declarations. Import declarations at the start
// of a block go to the top of the file. A wrapper's line
//
//	//readme:require PATH VERSION
//
// adds a requirement the README tells the reader to add (a module no
// published module requires, at the version the README names). Every block
// is compiled in one
// module that requires every published module of the repository (replaced
// by its directory), as a user's program that has them all would be, with
// //line directives that make the compiler name README.md's lines.

// wrapperDir holds the code around each README block, relative to the
// repository's root.
const wrapperDir = "scripts/release/testdata/readme"

// placeholder is the line of a wrapper where its block goes.
const placeholder = "// README snippet"

var (
	markerRE  = regexp.MustCompile(`^\s*<!-- go: ([a-z][a-z0-9_]*) -->\s*$`)
	requireRE = regexp.MustCompile(`(?m)^//readme:require (\S+) (\S+)$`)
	fenceRE   = regexp.MustCompile("^(\\s*)```go\\s*$")
)

// A snippet is one ```go block of the README.
type snippet struct {
	name  string   // its marker's NAME
	line  int      // the README's line of its first line of code
	lines []string // its code, the fence's indentation removed
}

// readmeSnippets returns the Go blocks of readme, and a sentence for each
// block without a marker, each marker without a block and each name used
// twice.
func readmeSnippets(readme string) ([]snippet, []string) {
	lines := strings.Split(readme, "\n")
	var out []snippet
	var problems []string
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		if m := markerRE.FindStringSubmatch(lines[i]); m != nil && (i+1 >= len(lines) || !fenceRE.MatchString(lines[i+1])) {
			problems = append(problems, fmt.Sprintf("README.md:%d: the marker <!-- go: %s --> is not followed by a ```go line", i+1, m[1]))
			continue
		}
		f := fenceRE.FindStringSubmatch(lines[i])
		if f == nil {
			continue
		}
		indent := f[1]
		s := snippet{line: i + 2}
		if i > 0 {
			if m := markerRE.FindStringSubmatch(lines[i-1]); m != nil {
				s.name = m[1]
			}
		}
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			s.lines = append(s.lines, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			problems = append(problems, fmt.Sprintf("README.md:%d: a ```go block that never ends", i+1))
		}
		i = j
		switch {
		case s.name == "":
			problems = append(problems, fmt.Sprintf("README.md:%d: a ```go block with no <!-- go: NAME --> line before it: add one, "+
				"and %s/NAME.go, the code around the block (a function of what it uses, with the line %q where it goes)", s.line-1, wrapperDir, placeholder))
			continue
		case seen[s.name] > 0:
			problems = append(problems, fmt.Sprintf("README.md:%d: the name %s is the block's at line %d too: give each block its own", s.line-1, s.name, seen[s.name]))
			continue
		}
		seen[s.name] = s.line - 1
		out = append(out, s)
	}
	return out, problems
}

// program is the Go file of s in its wrapper, whose text is wrapper and
// whose path, for the //line directives, is wrapperPath.
func (s snippet) program(wrapper, wrapperPath string) (string, error) {
	wlines := strings.Split(wrapper, "\n")
	at, pkgAt := -1, -1
	for i, l := range wlines {
		if strings.TrimSpace(l) == placeholder {
			if at >= 0 {
				return "", fmt.Errorf("%s: %q is there twice", wrapperPath, placeholder)
			}
			at = i
		}
		if pkgAt < 0 && strings.HasPrefix(l, "package ") {
			pkgAt = i
		}
	}
	if at < 0 || pkgAt < 0 || pkgAt > at {
		return "", fmt.Errorf("%s: want a package clause and then the line %q where README.md's block goes", wrapperPath, placeholder)
	}
	// The block's import declarations, at its start, move to the top of
	// the file; their lines stay in the block, blank, so that its line
	// numbers stay the README's.
	body := append([]string(nil), s.lines...)
	var imports []string
	for i := 0; i < len(body); i++ {
		l := body[i]
		switch {
		case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "//"):
			continue
		case strings.HasPrefix(l, "import ("):
			start := i
			for ; i < len(body) && strings.TrimSpace(body[i]) != ")"; i++ {
			}
			if i == len(body) {
				return "", fmt.Errorf("README.md:%d: an import ( without its )", s.line+start)
			}
			imports = append(imports, fmt.Sprintf("//line README.md:%d:1", s.line+start))
			imports = append(imports, body[start:i+1]...)
			for k := start; k <= i; k++ {
				body[k] = ""
			}
			continue
		case strings.HasPrefix(l, "import "):
			imports = append(imports, fmt.Sprintf("//line README.md:%d:1", s.line+i), l)
			body[i] = ""
			continue
		}
		break
	}
	var b strings.Builder
	for _, l := range wlines[:pkgAt+1] {
		b.WriteString(l + "\n")
	}
	for _, l := range imports {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "//line %s:%d:1\n", wrapperPath, pkgAt+2)
	for _, l := range wlines[pkgAt+1 : at] {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "//line README.md:%d:1\n", s.line)
	for _, l := range body {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "//line %s:%d:1\n", wrapperPath, at+2)
	b.WriteString(strings.Join(wlines[at+1:], "\n"))
	return b.String(), nil
}

// checkREADME compiles every Go block of root's README.md in its wrapper,
// in one module beside every published module, and returns an error naming
// every problem and the compiler's messages.
func checkREADME(root string) error {
	start := time.Now()
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return err
	}
	snippets, problems := readmeSnippets(string(readme))
	mods, err := discover(root)
	if err != nil {
		return err
	}
	pub, _ := published(mods)
	version, _ := crossRequirements(mods)
	if version == "" {
		version = "v0.1.0"
	}
	tmp, err := os.MkdirTemp("", "toolsafe-readme-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	requires := map[string]string{}
	for _, s := range snippets {
		wpath := filepath.Join(root, filepath.FromSlash(wrapperDir), s.name+".go")
		wrapper, err := os.ReadFile(wpath)
		if err != nil {
			problems = append(problems, fmt.Sprintf("README.md:%d: the block <!-- go: %s --> has no %s/%s.go, the code around it", s.line-1, s.name, wrapperDir, s.name))
			continue
		}
		for _, m := range requireRE.FindAllStringSubmatch(string(wrapper), -1) {
			if v, ok := requires[m[1]]; ok && v != m[2] {
				problems = append(problems, fmt.Sprintf("%s/%s.go requires %s %s, another wrapper %s", wrapperDir, s.name, m[1], m[2], v))
			}
			requires[m[1]] = m[2]
		}
		src, err := s.program(string(wrapper), wrapperDir+"/"+s.name+".go")
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if err := os.MkdirAll(filepath.Join(tmp, s.name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, s.name, s.name+".go"), []byte(src), 0o644); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("README.md's Go blocks:\n%s", indent(strings.Join(problems, "\n")))
	}

	var gomod strings.Builder
	gomod.WriteString("module example.com/readme\n\ngo 1.26.0\n\nrequire (\n")
	for _, m := range pub {
		fmt.Fprintf(&gomod, "\t%s %s\n", m.Path, version)
	}
	for _, p := range slices.Sorted(maps.Keys(requires)) {
		fmt.Fprintf(&gomod, "\t%s %s\n", p, requires[p])
	}
	gomod.WriteString(")\n\nreplace (\n")
	for _, m := range pub {
		fmt.Fprintf(&gomod, "\t%s => %s\n", m.Path, filepath.Dir(m.GoMod))
	}
	gomod.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod.String()), 0o644); err != nil {
		return err
	}
	sums, err := goSums(pub)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sums, 0o644); err != nil {
		return err
	}
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = tmp, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("README.md's Go blocks, each in its wrapper (%s), in one module beside the %d published modules: go %s: %v\n%s",
				wrapperDir, len(pub), strings.Join(args, " "), err, indent(string(out)))
		}
	}
	fmt.Printf("ok   README.md's %d Go blocks compile, beside the %d published modules (%.1fs)\n", len(snippets), len(pub), time.Since(start).Seconds())
	return nil
}
