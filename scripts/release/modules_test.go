package main

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func parsedModule(t *testing.T, dir, gomod string) *repoModule {
	t.Helper()
	f, err := modfile.Parse(dir+"/go.mod", []byte(gomod), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &repoModule{Dir: dir, Path: f.Module.Mod.Path, Published: true, File: f}
}

// Regression (issue 32, item 11): redisstore and mcptools required
// OpenTelemetry v1.47.0 while the core required v1.46.0; a program
// importing adktools beside either of them took otel/log v1.47.0, which ADK
// for Go v2.2.0 does not build with. The release check names every such
// requirement.
func TestEveryPublishedModuleRequiresTheCoresOpenTelemetry(t *testing.T) {
	core := parsedModule(t, ".", `module github.com/toolsafe/toolsafe
go 1.26.0
require (
	go.opentelemetry.io/otel v1.46.0
	go.opentelemetry.io/otel/sdk v1.46.0
	go.opentelemetry.io/otel/exporters/prometheus v0.60.0
)
`)
	agreeing := parsedModule(t, "einotools", `module github.com/toolsafe/toolsafe/einotools
go 1.26.0
require (
	go.opentelemetry.io/otel v1.46.0 // indirect
	go.opentelemetry.io/otel/log v0.20.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.68.0 // indirect
	go.opentelemetry.io/otel/exporters/prometheus v0.60.0
)
`)
	if got := otelRequirements([]*repoModule{core, agreeing}); len(got) != 0 {
		t.Fatalf("modules that agree with the core: %q; want no problem (v0 modules the core does not require, and contrib, have versions of their own)", got)
	}
	newer := parsedModule(t, "redisstore", `module github.com/toolsafe/toolsafe/redisstore
go 1.26.0
require (
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/prometheus v0.61.0
)
`)
	got := otelRequirements([]*repoModule{core, agreeing, newer})
	want := "redisstore/go.mod does not require the core's OpenTelemetry v1.46.0: it requires " +
		"go.opentelemetry.io/otel v1.47.0, not v1.46.0; go.opentelemetry.io/otel/log v1.47.0, not v1.46.0; " +
		"go.opentelemetry.io/otel/exporters/prometheus v0.61.0, not v0.60.0."
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "run go mod tidy there") {
		t.Fatalf("problems %q; want one, starting %q, saying the fix", got, want)
	}
}

// The program the release check builds imports each package of a module
// that has Go files to build: a directory of tests only (the core's test/)
// is no package a user imports, and go build refuses to import one; a
// command and an internal package are not imported either.
func TestConsumedPackagesAreThoseAUserImports(t *testing.T) {
	m := &repoModule{Dir: ".", Path: basePath, Published: true}
	deps := strings.Join([]string{
		basePath + " v0.2.0 toolsafe " + basePath + " 12 0",
		basePath + " v0.2.0 test " + basePath + "/test 0 0",
		basePath + " v0.2.0 call " + basePath + "/internal/call 9 0",
		basePath + " v0.2.0 main " + basePath + "/cmd/toolsafe 2 0",
		basePath + " v0.2.0 policy " + basePath + "/policy 7 0",
		"github.com/tmc/langchaingo v0.1.14 tools github.com/tmc/langchaingo/tools 3 0",
	}, "\n")
	imports, commands, err := consumedPackages(deps, m, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{basePath, basePath + "/policy"}; !slices.Equal(imports, want) {
		t.Errorf("imports %q; want %q (no test-only, internal or main package)", imports, want)
	}
	if want := []string{basePath + "/cmd/toolsafe"}; !slices.Equal(commands, want) {
		t.Errorf("commands %q; want %q", commands, want)
	}
}
