// Command exports counts the exported names of every package of the modules
// under a directory, and checks two size rules: no non-test source file over
// -maxlines lines and no function over -maxfunc lines (table data excepted:
// a function whose body is one composite literal).
//
// Usage, from the repository's root:
//
//	go run ./scripts/exports [-check] [dir]
//
// It prints one line per package (exported names, files, lines) and the
// module's total, then every file or function over its limit. With -check
// it exits 1 when any is over.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type pkgStat struct {
	names, files, lines int
}

func main() {
	check := flag.Bool("check", false, "exit 1 when a file or a function is over its limit")
	maxLines := flag.Int("maxlines", 500, "the most lines of a non-test source file")
	maxFunc := flag.Int("maxfunc", 80, "the most lines of a function, table data excepted")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	sc := &scanner{
		root:     root,
		maxLines: *maxLines,
		maxFunc:  *maxFunc,
		stats:    map[string]*pkgStat{},
		fset:     token.NewFileSet(),
	}
	if err := filepath.WalkDir(root, sc.visit); err != nil {
		fmt.Fprintln(os.Stderr, "exports:", err)
		os.Exit(2)
	}
	printStats(sc.stats)
	for _, o := range sc.over {
		fmt.Println("over:", o)
	}
	if *check && len(sc.over) > 0 {
		os.Exit(1)
	}
}

// scanner gathers the per-package counts and the over-limit findings of a
// walk of the tree under root.
type scanner struct {
	root              string
	maxLines, maxFunc int
	stats             map[string]*pkgStat
	over              []string
	fset              *token.FileSet
}

// visit is the filepath.WalkDir callback: it skips hidden, testdata and
// node_modules directories and scans every non-test Go source file.
func (sc *scanner) visit(path string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if d.IsDir() {
		if n := d.Name(); path != sc.root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
			return filepath.SkipDir
		}
		return nil
	}
	if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
		return nil
	}
	return sc.scanFile(path)
}

// scanFile parses one source file, adds it to its package's counts and
// records the file or any of its functions when over its limit.
func (sc *scanner) scanFile(path string) error {
	f, err := parser.ParseFile(sc.fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	s := sc.stats[dir]
	if s == nil {
		s = &pkgStat{}
		sc.stats[dir] = s
	}
	lines := sc.fset.Position(f.End()).Line
	s.files++
	s.lines += lines
	if lines > sc.maxLines {
		sc.over = append(sc.over, fmt.Sprintf("%s: %d lines (most %d)", path, lines, sc.maxLines))
	}
	if f.Name.Name != "main" {
		s.names += exported(f)
	}
	sc.checkFuncs(path, f)
	return nil
}

// checkFuncs records every function of f longer than the limit, table data
// excepted.
func (sc *scanner) checkFuncs(path string, f *ast.File) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || tableData(fn) {
			continue
		}
		n := sc.fset.Position(fn.End()).Line - sc.fset.Position(fn.Pos()).Line + 1
		if n > sc.maxFunc {
			sc.over = append(sc.over, fmt.Sprintf("%s: func %s: %d lines (most %d)", path, fn.Name.Name, n, sc.maxFunc))
		}
	}
}

// printStats prints one line per package, sorted by directory, and the
// total of exported names of all public packages.
func printStats(stats map[string]*pkgStat) {
	dirs := make([]string, 0, len(stats))
	for d := range stats {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	total := 0
	fmt.Printf("%-40s %6s %6s %7s\n", "package", "names", "files", "lines")
	for _, d := range dirs {
		s := stats[d]
		if s.names == 0 && (strings.Contains(d, "internal") || strings.HasPrefix(d, "examples") || strings.HasPrefix(d, "cmd") || strings.HasPrefix(d, "scripts")) {
			fmt.Printf("%-40s %6s %6d %7d\n", d, "-", s.files, s.lines)
			continue
		}
		if !strings.Contains(d, "internal") {
			total += s.names
		}
		fmt.Printf("%-40s %6d %6d %7d\n", d, s.names, s.files, s.lines)
	}
	fmt.Printf("%-40s %6d\n", "exported names, all public packages", total)
}

// exported counts the exported names f declares: types, functions,
// methods of exported types, constants, variables and the exported fields
// and interface methods of exported types are not counted separately (a
// type counts once, with its methods each).
func exported(f *ast.File) int {
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && !recvExported(d.Recv) {
				continue
			}
			n++
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func recvExported(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// tableData reports whether fn's body is table data: a single return of a
// composite literal, or a single assignment of one.
func tableData(fn *ast.FuncDecl) bool {
	if len(fn.Body.List) != 1 {
		return false
	}
	switch s := fn.Body.List[0].(type) {
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			_, ok := s.Results[0].(*ast.CompositeLit)
			return ok
		}
	}
	return false
}
