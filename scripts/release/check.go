package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// check fetches every published module alone, as a user's build would, from
// module zips of the working tree served by a file-system module proxy.
func check(root string) error {
	start := time.Now()
	mods, err := discover(root)
	if err != nil {
		return err
	}
	pub, unpub := published(mods)
	version, problems := crossRequirements(mods)
	problems = append(problems, otelRequirements(pub)...)
	if version == "" {
		// The go.mod files name no usable version: fetch at the next one
		// after the newest tag, which shows how a user's build fails.
		version = nextAfterTags(root)
	}
	fmt.Printf("-- published at %s: %s (not published: %s)\n", version, dirs(pub), dirs(unpub))
	for _, p := range problems {
		fmt.Println("problem:", p)
	}

	tmp, err := os.MkdirTemp("", "toolsafe-releasecheck-")
	if err != nil {
		return err
	}
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range pub {
		if err := addToProxy(proxy, m, version); err != nil {
			os.RemoveAll(tmp)
			return err
		}
	}
	env, err := consumerEnv(tmp, proxy)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	defer func() {
		// The module cache is read-only: go clean -modcache removes it.
		cmd := exec.Command("go", "clean", "-modcache")
		cmd.Env = env
		cmd.Run()
		os.RemoveAll(tmp)
	}()
	sums, err := goSums(pub)
	if err != nil {
		return err
	}

	failed := 0
	for _, m := range pub {
		if err := consume(filepath.Join(tmp, "consumer-"+strings.ReplaceAll(m.Dir, "/", "-")), m, version, env, sums); err != nil {
			fmt.Printf("FAIL %s@%s, fetched alone in an empty module:\n%s\n", m.Path, version, indent(err.Error()))
			failed++
		}
	}
	together := 0
	if err := consumeTogether(filepath.Join(tmp, "consumer-together"), pub, version, env, sums); err != nil {
		fmt.Printf("FAIL the %d published modules at %s, fetched together in one empty module:\n%s\n", len(pub), version, indent(err.Error()))
		together = 1
	}
	if len(problems) > 0 || failed > 0 || together > 0 {
		return fmt.Errorf("release check failed: %d go.mod problems, %d of %d modules cannot be fetched alone, %d programs importing them all do not build",
			len(problems), failed, len(pub), together)
	}
	fmt.Printf("ok: every published module builds when fetched alone at %s, and all of them together (%.1fs)\n", version, time.Since(start).Seconds())
	return nil
}

// consumeTogether gets every module of pub at version in one empty module
// at dir and builds one program importing every importable package of all
// of them, as a user's program that combines them would: an agent fleet on
// ADK for Go that shares breakers through redisstore and calls MCP tools.
// A requirement that one module cannot build with, but another pulls in
// (ADK for Go v2.2.0 and OpenTelemetry's otel/log v1), fails here, though
// each module builds alone.
func consumeTogether(dir string, pub []*repoModule, version string, env []string, sums []byte) error {
	if err := writeConsumerModule(dir, sums); err != nil {
		return err
	}
	run := goRunner(dir, env)
	t0 := time.Now()
	get := []string{"get"}
	list := []string{"list", "-deps", "-f", listFormat}
	for _, m := range pub {
		get = append(get, m.Path+"@"+version)
		list = append(list, m.Path+"/...")
	}
	if _, err := run(get...); err != nil {
		return err
	}
	deps, err := run(list...)
	if err != nil {
		return err
	}
	var all []string
	for _, m := range pub {
		imports, _, err := consumedPackages(deps, m, version)
		if err != nil {
			return err
		}
		all = append(all, imports...)
	}
	if err := writeImporter(dir, all); err != nil {
		return err
	}
	if _, err := run("build", "-o", os.DevNull, "."); err != nil {
		return err
	}
	fmt.Printf("ok   all %d published modules at %s: go get together, then one program importing their %d packages builds (%.1fs)\n",
		len(pub), version, len(all), time.Since(t0).Seconds())
	return nil
}

// addToProxy lays out m at version in the file-system module proxy at dir:
// $dir/<escaped path>/@v/{list,VERSION.info,VERSION.mod,VERSION.zip}.
func addToProxy(dir string, m *repoModule, version string) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(at, escVersion+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, module.Version{Path: m.Path, Version: version}, filepath.Dir(m.GoMod)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	gomod, err := os.ReadFile(m.GoMod)
	if err != nil {
		return err
	}
	info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		escVersion + ".mod":  gomod,
		escVersion + ".info": info,
		"list":               []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// consumerEnv is the environment of the empty modules: the local proxy
// first, then the module cache's downloads (so a warm run needs no
// network), then the configured GOPROXY for anything else; checksums of
// toolsafe's own modules are not looked up (they are not published yet),
// all others are. The module cache is a fresh one, so a zip of an earlier
// run at the same version is never reused.
func consumerEnv(tmp, proxy string) ([]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOPROXY", "GOFLAGS", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	var goenv struct{ GOPROXY, GOFLAGS, GOMODCACHE string }
	if err := json.Unmarshal(out, &goenv); err != nil {
		return nil, err
	}
	var flags []string
	for _, f := range strings.Fields(goenv.GOFLAGS) {
		if !strings.HasPrefix(f, "-mod=") {
			flags = append(flags, f)
		}
	}
	// -trimpath: the module cache is new each run, and without it the
	// build cache would miss on its paths.
	flags = append(flags, "-mod=mod", "-trimpath")
	proxies := []string{"file://" + filepath.ToSlash(proxy)}
	if goenv.GOMODCACHE != "" {
		proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(goenv.GOMODCACHE, "cache", "download")))
	}
	if goenv.GOPROXY != "" {
		proxies = append(proxies, goenv.GOPROXY)
	}
	set := map[string]string{
		"GOPROXY":     strings.Join(proxies, ","),
		"GOFLAGS":     strings.Join(flags, " "),
		"GONOSUMDB":   basePath,
		"GOPRIVATE":   "",
		"GONOPROXY":   "",
		"GOMODCACHE":  filepath.Join(tmp, "modcache"),
		"GOWORK":      "off",
		"GOTOOLCHAIN": "local",
		"GOBIN":       filepath.Join(tmp, "bin"),
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// goSums is the union of the published modules' go.sum lines for modules
// outside the repository: the empty modules start from it, so the checksum
// database is asked only about what those files do not hold.
func goSums(pub []*repoModule) ([]byte, error) {
	seen := map[string]bool{}
	for _, m := range pub {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(m.GoMod), "go.sum"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line == basePath || strings.HasPrefix(line, basePath+" ") || strings.HasPrefix(line, basePath+"/") {
				continue
			}
			seen[line] = true
		}
	}
	lines := make([]string, 0, len(seen))
	for l := range seen {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

// consume gets m@version alone in an empty module at dir and builds a
// program importing each of its importable packages, and its commands.
func consume(dir string, m *repoModule, version string, env []string, sums []byte) error {
	if err := writeConsumerModule(dir, sums); err != nil {
		return err
	}
	run := goRunner(dir, env)
	t0 := time.Now()
	if _, err := run("get", m.Path+"@"+version); err != nil {
		return err
	}

	// The module's packages and their dependencies, with the module of each.
	deps, err := run("list", "-deps", "-f", listFormat, m.Path+"/...")
	if err != nil {
		return err
	}
	imports, commands, err := consumedPackages(deps, m, version)
	if err != nil {
		return err
	}
	if err := writeImporter(dir, imports); err != nil {
		return err
	}
	if _, err := run("build", "-o", os.DevNull, "."); err != nil {
		return err
	}
	// A command is installed the way the README says: outside any module
	// (which fails if its module has replace directives), or, for a nested
	// module's command, which has them, as a tool of the user's module.
	for _, c := range commands {
		if !asTool(m) {
			if _, err := run("install", c+"@"+version); err != nil {
				return err
			}
			continue
		}
		if _, err := run("get", "-tool", c+"@"+version); err != nil {
			return err
		}
		if _, err := run("build", "-o", os.DevNull, c); err != nil {
			return err
		}
	}
	printConsumed(m, version, imports, commands, t0)
	return nil
}

// writeConsumerModule makes dir an empty module whose go.sum is sums.
func writeConsumerModule(dir string, sums []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := "module example.com/releasecheck\n\ngo 1.26.0\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644)
}

// goRunner returns a function running the go command in dir with env,
// returning its combined output, and its output in the error on failure.
func goRunner(dir string, env []string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = env
		t := time.Now()
		out, err := cmd.CombinedOutput()
		if os.Getenv("RELEASECHECK_VERBOSE") != "" {
			fmt.Printf("     go %s: %.1fs\n", strings.Join(args, " "), time.Since(t).Seconds())
		}
		if err != nil {
			return string(out), fmt.Errorf("$ go %s\n%s%v", strings.Join(args, " "), out, err)
		}
		return string(out), nil
	}
}

// listFormat is the go list -f template consumedPackages reads: each
// package's module and version, its name and import path, and how many
// Go files it builds from (a directory of tests only, such as the core's
// test/, builds from none and is no package a user imports).
const listFormat = "{{with .Module}}{{.Path}} {{.Version}} {{$.Name}} {{$.ImportPath}} {{len $.GoFiles}} {{len $.CgoFiles}}{{end}}"

// consumedPackages reads the go list -deps output deps and returns m's
// importable packages and its published commands. It fails when the build
// uses any of the repository's modules at another version than version, or
// when m has no importable package.
func consumedPackages(deps string, m *repoModule, version string) (imports, commands []string, err error) {
	var wrong []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(deps), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 {
			continue
		}
		modPath, modVersion, name, importPath := f[0], f[1], f[2], f[3]
		if f[4] == "0" && f[5] == "0" {
			continue // tests only: nothing to import
		}
		// Every module of the repository that the build uses must be at
		// version: at any other, it did not come from this working tree.
		if (modPath == basePath || strings.HasPrefix(modPath, basePath+"/")) && modVersion != version && !seen[modPath] {
			seen[modPath] = true
			wrong = append(wrong, modPath+"@"+modVersion)
		}
		if modPath != m.Path {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(importPath, m.Path), "/")
		switch {
		case name == "main":
			if isPublishedDir(rel) { // not the module's own examples, tools, scripts or benchmarks
				commands = append(commands, importPath)
			}
		case !isInternal(importPath):
			imports = append(imports, importPath)
		}
	}
	if len(wrong) > 0 {
		return nil, nil, fmt.Errorf("the build uses the repository's modules at other versions than %s: %s", version, strings.Join(wrong, ", "))
	}
	if len(imports) == 0 {
		return nil, nil, fmt.Errorf("%s has no importable package", m.Path)
	}
	return imports, commands, nil
}

// writeImporter writes dir's main.go: a program importing each of imports.
func writeImporter(dir string, imports []string) error {
	var src strings.Builder
	src.WriteString("// Command releasecheck imports every package of the toolsafe modules it is given.\npackage main\n\nimport (\n")
	for _, p := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644)
}

// printConsumed reports that m@version was consumed, with its package and
// command counts and the time since t0.
func printConsumed(m *repoModule, version string, imports, commands []string, t0 time.Time) {
	noun := "packages"
	if len(imports) == 1 {
		noun = "package"
	}
	fmt.Printf("ok   %s@%s: go get alone, then a program importing its %d %s builds", m.Path, version, len(imports), noun)
	if len(commands) > 0 && asTool(m) {
		fmt.Printf(", and go get -tool %s@%s works", strings.Join(commands, " "), version)
	} else if len(commands) > 0 {
		fmt.Printf(", and go install %s@%s works", strings.Join(commands, " "), version)
	}
	fmt.Printf(" (%.1fs)\n", time.Since(t0).Seconds())
}

// asTool reports whether m's commands are got as tools of the user's
// module (go get -tool): go install cmd@version refuses a module with
// replace directives, which every nested module has.
func asTool(m *repoModule) bool { return len(m.File.Replace) > 0 }

func isInternal(importPath string) bool {
	return strings.HasSuffix(importPath, "/internal") || strings.Contains(importPath, "/internal/")
}

// nextAfterTags is the next minor version after the newest root tag, or
// v0.1.0 when there is none.
func nextAfterTags(root string) string {
	out, _ := exec.Command("git", "-C", root, "tag", "--list", "v*").Output()
	newest := ""
	for _, t := range strings.Fields(string(out)) {
		if isReleaseVersion(t) && semver.Prerelease(t) == "" && (newest == "" || semver.Compare(t, newest) > 0) {
			newest = t
		}
	}
	if newest == "" {
		return "v0.1.0"
	}
	var major, minor int
	fmt.Sscanf(semver.MajorMinor(newest), "v%d.%d", &major, &minor)
	return fmt.Sprintf("v%d.%d.0", major, minor+1)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
