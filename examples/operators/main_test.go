package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	rulesFile     = "../../deploy/prometheus/toolsafe-rules.yml"
	dashboardFile = "../../deploy/grafana/toolsafe-dashboard.json"
)

// emitted is what a scrape of the demo's /metrics holds: each series name
// (a histogram's _bucket, _sum and _count) with its label names.
type emitted map[string]map[string]bool

// startRedis starts a redis-server of the test's own on a free port of
// 127.0.0.1, stopped when t ends, and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not installed: apt-get install -y redis-server (.ci/run does it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 200 {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(10 * time.Millisecond) // a process starting: nothing to wait on but its port
	}
	return addr
}

// stormScrape takes the demo through what its storm shows, step by step,
// and returns its /metrics as Prometheus reads it, its breaker, budget and
// grants shared through a real Redis as a fleet's: a refund waiting for
// approval, a call limit met, an attempt abandoned by a tool that ignores
// its context, then the upstream down until fetch_invoice's breaker opens
// and search_catalog's calls fail.
func stormScrape(t *testing.T) (emitted, []*dto.MetricFamily) {
	t.Helper()
	d, err := newDemo("127.0.0.1:0", startRedis(t), "toolsafe-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.close(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	kind := func(r middleware.Result) string {
		if r.Failure == nil {
			return "ok"
		}
		return string(r.Failure.Kind)
	}
	if r := d.refund.Run(run.With(ctx, "refund-run", run.NewMemoryLedger()), `{"order":"A-1001"}`); kind(r) != "approval-required" {
		t.Fatalf("refund: %s; want approval-required", kind(r))
	}
	rctx := run.With(ctx, "loop-run", run.NewMemoryLedger())
	for i, want := range []string{"ok", "ok", "ok", "call-limit"} {
		if r := d.fetch.Run(rctx, "INV-1001"); kind(r) != want {
			t.Fatalf("fetch_invoice call %d in one run: %s; want %s", i+1, kind(r), want)
		}
	}
	if r := d.report.Run(ctx, "2026-11"); kind(r) != "tool-timeout" || r.Abandoned != 1 {
		t.Fatalf("export_report: %s with %d abandoned; want tool-timeout, 1 abandoned", kind(r), r.Abandoned)
	}
	d.down(true)
	if r := d.search.Run(ctx, "INV-2001"); kind(r) != "tool-failed" {
		t.Fatalf("search_catalog while the upstream is down: %s; want tool-failed", kind(r))
	}
	opened := false
	for i := range 10 {
		if r := d.fetch.Run(ctx, "INV-"+string(rune('0'+i))); kind(r) == "circuit-open" {
			opened = true
			break
		}
	}
	if !opened {
		t.Fatal("fetch_invoice's breaker did not open in 10 calls to an upstream that is down")
	}

	resp, err := http.Get("http://" + d.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	em := emitted{}
	var all []*dto.MetricFamily
	for name, f := range families {
		all = append(all, f)
		names := []string{name}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names = []string{name + "_bucket", name + "_sum", name + "_count"}
		}
		for _, n := range names {
			labels := map[string]bool{}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = true
				}
			}
			if strings.HasSuffix(n, "_bucket") {
				labels["le"] = true
			}
			em[n] = labels
		}
	}
	return em, all
}

// rules is the part of a Prometheus rules file the tests read.
type rules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int             `json:"id"`
		Type       string          `json:"type"`
		Title      string          `json:"title"`
		Datasource json.RawMessage `json:"datasource"`
		Targets    []struct {
			Expr         string          `json:"expr"`
			LegendFormat string          `json:"legendFormat"`
			Datasource   json.RawMessage `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

func readRules(t *testing.T) rules {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var r rules
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return r
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// checker holds expressions to what the library emits.
type checker struct {
	t       *testing.T
	em      emitted
	records map[string]string // recording rule → its expression
}

// resolve returns the series an expression reads, recording rules expanded
// to the series their expressions read, and the labels they may carry
// (those of the series, and the target labels Prometheus adds).
func (c *checker) resolve(where, expr string) (names promqlNames, labels map[string]bool) {
	names = namesIn(expr)
	labels = map[string]bool{"instance": true, "job": true}
	for _, m := range names.metrics {
		if rec, ok := c.records[m]; ok {
			_, inner := c.resolve(where+" → "+m, rec)
			for l := range inner {
				labels[l] = true
			}
			continue
		}
		if strings.Contains(m, ":") {
			c.t.Errorf("%s reads %s, which no rule of %s records", where, m, rulesFile)
			continue
		}
		ls, ok := c.em[m]
		if !ok {
			c.t.Errorf("%s names the metric %s, which toolsafe does not emit (the demo's /metrics has %v)", where, m, keys(c.em))
			continue
		}
		for l := range ls {
			labels[l] = true
		}
	}
	for _, l := range names.labels {
		if !labels[l] {
			c.t.Errorf("%s names the label %s, which %v do not carry", where, l, names.metrics)
		}
	}
	return names, labels
}

// templateLabels are the labels an annotation or legend names.
var templateLabels = regexp.MustCompile(`\{\{\s*(?:\$labels\.)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Every metric and label the rules and the dashboard name is one toolsafe
// emits, read from a real /metrics scrape of the demo through the
// OpenTelemetry Prometheus exporter.
func TestTheOperatorFilesNameOnlyWhatTheLibraryEmits(t *testing.T) {
	em, _ := stormScrape(t)
	c := &checker{t: t, em: em, records: map[string]string{}}
	r := readRules(t)
	alerts := 0
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			if rule.Record != "" {
				c.records[rule.Record] = rule.Expr
			}
		}
	}
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			name := rule.Record + rule.Alert
			_, labels := c.resolve(rulesFile+" "+name, rule.Expr)
			if rule.Alert == "" {
				continue
			}
			alerts++
			for key, text := range rule.Annotations {
				for _, m := range regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`).FindAllStringSubmatch(text, -1) {
					if !labels[m[1]] {
						t.Errorf("%s %s's %s names the label %s, which its expression's series do not carry", rulesFile, name, key, m[1])
					}
				}
			}
		}
	}
	if alerts < 7 || len(c.records) < 4 {
		t.Errorf("%d alerts and %d recording rules read; want the 7 alerts and 4 recording rules of %s", alerts, len(c.records), rulesFile)
	}

	d := readDashboard(t)
	targets := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			targets++
			where := dashboardFile + " panel " + p.Title
			names, labels := c.resolve(where, tg.Expr)
			for _, m := range templateLabels.FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !labels[m[1]] {
					t.Errorf("%s's legend names the label %s, which %v do not carry", where, m[1], names.metrics)
				}
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		c.resolve(dashboardFile+" variable "+v.Name, q.Query)
	}
	if targets < 10 {
		t.Errorf("%d queries read in %s; want every panel's", targets, dashboardFile)
	}
}

// The dashboard can be provisioned as it is: a fixed uid, a Prometheus
// data source chosen by a variable that every panel and query uses, and
// panel IDs that are unique.
func TestTheDashboardIsProvisioningReady(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q; want both set, so provisioning keeps one dashboard", d.UID, d.Title)
	}
	hasDS := slices.ContainsFunc(d.Templating.List, func(v struct {
		Name  string          `json:"name"`
		Type  string          `json:"type"`
		Query json.RawMessage `json:"query"`
	}) bool {
		return v.Name == "datasource" && v.Type == "datasource" && string(v.Query) == `"prometheus"`
	})
	if !hasDS {
		t.Error("no variable datasource of type datasource (query prometheus)")
	}
	const ds = `{"type":"prometheus","uid":"${datasource}"}`
	ids := map[int]string{}
	for _, p := range d.Panels {
		if other, ok := ids[p.ID]; ok {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if compact(t, p.Datasource) != ds {
			t.Errorf("panel %q's datasource %s; want %s", p.Title, p.Datasource, ds)
		}
		for _, tg := range p.Targets {
			if compact(t, tg.Datasource) != ds {
				t.Errorf("panel %q's query datasource %s; want %s", p.Title, tg.Datasource, ds)
			}
		}
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	var v map[string]string
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// No label of the scrape holds an upstream's words: the upstream's
// address, its errors' text.
func TestNoLabelHoldsUpstreamText(t *testing.T) {
	_, families := stormScrape(t)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := strings.ToLower(l.GetValue())
				for _, bad := range []string{"127.0.0.1", "reset", "connection", "eof", "http://"} {
					if strings.Contains(v, bad) {
						t.Errorf("%s{%s=%q} holds upstream text %q", f.GetName(), l.GetName(), l.GetValue(), bad)
					}
				}
			}
		}
	}
}

func TestNamesIn(t *testing.T) {
	for _, c := range []struct {
		expr            string
		metrics, labels []string
	}{
		{`sum by (a, b) (rate(x_total{c="v",d=~"$tool"}[5m]))`, []string{"x_total"}, []string{"a", "b", "c", "d"}},
		{`rec:one{a!="x"} > 0.1 and on (b) sum by (b) (rec:two) > 1/60`, []string{"rec:one", "rec:two"}, []string{"a", "b", "b"}},
		{`histogram_quantile(0.95, sum by (t, le) (rate(h_bucket[5m])))`, []string{"h_bucket"}, []string{"t", "le"}},
		{`count(m{s!="closed"} == 1) or vector(0)`, []string{"m"}, []string{"s"}},
		{`label_values(x_total, gen_ai_tool_name)`, []string{"x_total"}, []string{"gen_ai_tool_name"}},
	} {
		got := namesIn(c.expr)
		if !slices.Equal(got.metrics, c.metrics) || !slices.Equal(got.labels, c.labels) {
			t.Errorf("namesIn(%s) = %v, %v; want %v, %v", c.expr, got.metrics, got.labels, c.metrics, c.labels)
		}
	}
}
