// Command e2e checks a storm end to end against a real Prometheus that
// scrapes the operators demo with deploy/prometheus/toolsafe-rules.yml
// loaded (scripts/e2e-prometheus.sh starts both): the breaker gauge goes
// open, the alert ToolsafeCircuitBreakerOpen fires, and it clears once the
// upstream is back. It reads everything from Prometheus's HTTP API, then
// takes a screenshot of Prometheus's graph of the breaker state and the
// failure rates through the storm in headless Chromium.
//
//	go run -C examples/operators ./e2e -prometheus http://127.0.0.1:9090 -screenshot storm.png
//
// It gives up, failing, after -timeout. Only loopback addresses are used.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

const (
	alert = "ToolsafeCircuitBreakerOpen"
	// The graph's two panels: the breaker state, and how the calls that did
	// not succeed ended, per tool.
	breakerExpr = `toolsafe_circuit_breaker_state{toolsafe_circuit_breaker_state="open"}`
	failedExpr  = `sum by (gen_ai_tool_name, toolsafe_outcome) (rate(toolsafe_tool_calls_total{toolsafe_outcome=~"tool-failed|circuit-open"}[30s]))`
)

func main() {
	prom := flag.String("prometheus", "http://127.0.0.1:9090", "the Prometheus that scrapes the demo")
	shot := flag.String("screenshot", "", "where to write the graph's screenshot (PNG)")
	timeout := flag.Duration("timeout", 8*time.Minute, "how long the whole check may take")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := check(ctx, *prom, *shot); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}

func check(ctx context.Context, prom, shot string) error {
	start := time.Now()
	step := func(what string, cond func() (bool, error)) error {
		for {
			ok, err := cond()
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if ok {
				fmt.Printf("-- %s after %v\n", what, time.Since(start).Round(time.Second))
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: not seen in time", what)
			case <-time.After(time.Second): // Prometheus is polled: it has no way to call back
			}
		}
	}
	if err := step("the demo is scraped", func() (bool, error) {
		v, err := query(ctx, prom, `up{job="agents"}`)
		return err == nil && len(v) == 1 && v[0] == "1", nil // Prometheus may not listen yet
	}); err != nil {
		return err
	}
	if err := step("the breaker gauge reads open", func() (bool, error) {
		v, err := query(ctx, prom, breakerExpr+` == 1`)
		return len(v) > 0, err
	}); err != nil {
		return err
	}
	if err := step("the alert "+alert+" fires", func() (bool, error) {
		st, err := alertState(ctx, prom)
		return st == "firing", err
	}); err != nil {
		return err
	}
	if err := step("the breaker gauge reads closed again", func() (bool, error) {
		v, err := query(ctx, prom, `toolsafe_circuit_breaker_state{toolsafe_circuit_breaker_state="closed"} == 1`)
		return len(v) > 0, err
	}); err != nil {
		return err
	}
	if err := step("the alert clears", func() (bool, error) {
		st, err := alertState(ctx, prom)
		return st == "", err
	}); err != nil {
		return err
	}
	if shot == "" {
		return nil
	}
	return screenshot(ctx, prom, time.Since(start)+time.Minute, shot)
}

// query returns the values of expr's instant vector now.
func query(ctx context.Context, prom, expr string) ([]string, error) {
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := get(ctx, prom+"/api/v1/query?query="+url.QueryEscape(expr), &out); err != nil {
		return nil, err
	}
	var vs []string
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		vs = append(vs, s)
	}
	return vs, nil
}

// alertState is the state of the alert ("pending", "firing"), or "" when
// it is neither.
func alertState(ctx context.Context, prom string) (string, error) {
	var out struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := get(ctx, prom+"/api/v1/alerts", &out); err != nil {
		return "", err
	}
	state := ""
	for _, a := range out.Data.Alerts {
		if a.Labels["alertname"] == alert && a.Labels["toolsafe_circuit_breaker_name"] == "billing" {
			if a.State == "firing" || state == "" {
				state = a.State
			}
		}
	}
	return state, nil
}

func get(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// screenshot writes a PNG of Prometheus's graph page with both panels over
// the last span of time.
func screenshot(ctx context.Context, prom string, span time.Duration, path string) error {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return errors.New("chromium is not installed: apt-get install -y --no-install-recommends chromium fonts-dejavu-core")
	}
	dir, err := os.MkdirTemp("", "toolsafe-e2e-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root in a container
		chromedp.Flag("headless", "new"),
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1400, 1250),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	rng := fmt.Sprintf("%ds", int(span.Seconds()))
	q := url.Values{}
	for i, expr := range []string{breakerExpr, failedExpr} {
		p := fmt.Sprintf("g%d.", i)
		q.Set(p+"expr", expr)
		q.Set(p+"tab", "0") // the graph
		q.Set(p+"range_input", rng)
		q.Set(p+"stacked", "0")
		q.Set(p+"show_exemplars", "0")
	}
	err = chromedp.Do(bctx,
		chromedp.Navigate(prom+"/graph?"+q.Encode()),
		chromedp.WaitVisible(`.rickshaw_legend .line`), // Debian's Prometheus serves the classic UI
		chromedp.Sleep(2*time.Second),                  // the graphs draw after their data arrive
	)
	var png []byte
	if err == nil {
		png, err = chromedp.Run(bctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("-- screenshot of the storm in %s (%d bytes)\n", path, len(png))
	return nil
}
