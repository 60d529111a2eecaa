package toolsafe_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A nested module is built against the core's published API; reaching into
// the core's internal/ ties it to parts that may change without notice, and
// the first rename there breaks the nested module with no version to tell.
// The examples are exempt: they are not published.
func TestNoNestedModuleImportsTheCoreInternals(t *testing.T) {
	walked, crossing, err := coreInternalsImported(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"adktools", "bench", "einotools", "mcptools", "redisstore", "scripts/release", "temporaltools"} {
		if !slices.Contains(walked, m) {
			t.Errorf("nested module %s was not walked; walked %v", m, walked)
		}
	}
	for _, c := range crossing {
		t.Errorf("%s (nested module %s) imports the core's %s; use the core's public API or the module's own internal/", c.file, c.module, c.imports)
	}
}

// crossing is one import of the core's internal/ from a nested module.
type crossing struct {
	module  string // the nested module's directory, relative to the repository
	file    string // the importing file, relative to the repository
	imports string // the core package it imports, as "internal/…"
}

// coreInternalsImported walks every go.mod under root but root's own and
// those under examples/, and returns each import of the core module's
// internal/ packages that the Go files of those modules make, with the
// modules it walked (their directories, relative to root). Every .go
// file counts, whatever its build constraints, tests included; testdata
// and hidden directories do not.
func coreInternalsImported(root string) (walked []string, found []crossing, err error) {
	var mods []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			if dir := filepath.Dir(path); dir != root {
				mods = append(mods, dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, mod := range mods {
		rel, err := filepath.Rel(root, mod)
		if err != nil {
			return nil, nil, err
		}
		rel = filepath.ToSlash(rel)
		if rel == "examples" || strings.HasPrefix(rel, "examples/") {
			continue
		}
		walked = append(walked, rel)
		err = filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == mod {
					return nil
				}
				if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own, walked on its own
				}
				return nil
			}
			if !strings.HasSuffix(d.Name(), ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, spec := range f.Imports {
				imp, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					return err
				}
				if imp == module+"/internal" || strings.HasPrefix(imp, module+"/internal/") {
					file, _ := filepath.Rel(root, path)
					found = append(found, crossing{module: rel, file: filepath.ToSlash(file), imports: strings.TrimPrefix(imp, module+"/")})
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	slices.SortFunc(found, func(a, b crossing) int { return strings.Compare(a.file+a.imports, b.file+b.imports) })
	return walked, found, nil
}
