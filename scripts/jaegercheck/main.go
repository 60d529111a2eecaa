// Command jaegercheck asks a running Jaeger's HTTP API for the traces of a
// service and checks the span tree toolsafe's otelhook makes: every call
// span "execute_tool {tool}" has one child "attempt {n}" per attempt,
// numbered from 1, as many as its toolsafe.attempts says, and a retry event
// before each attempt after the first (and perhaps one more, refused by a
// circuit breaker); a failed call has status ERROR and an
// error.type; and no tag or event field holds a raw error text. It also
// requires the calls to share one trace (the agent run's), and the outcomes
// asked for with -want.
//
// It polls until the checks pass or -timeout passes (spans reach Jaeger's
// in-memory store a moment after the program that sent them exits), then
// prints the tree it found and exits 0, or prints what failed and exits 1.
//
//	go run ./scripts/jaegercheck -service toolsafe-billing -tool fetch_invoice \
//		-calls 4 -want ok,tool-error,tool-failed -retried 1
//
// It is used by scripts/e2e-jaeger.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	query := flag.String("query", "http://127.0.0.1:16686", "Jaeger's query HTTP endpoint")
	service := flag.String("service", "toolsafe-billing", "the service.name of the program that sent the traces")
	tool := flag.String("tool", "fetch_invoice", "the tool whose call spans to check")
	calls := flag.Int("calls", 1, "the least number of call spans expected")
	want := flag.String("want", "", "comma-separated outcomes that must each appear on a call span: ok or an error.type such as tool-failed")
	retried := flag.Int("retried", 1, "the least number of call spans with more than one attempt")
	forbid := flag.String("forbid", "reset by peer,connection reset,broken pipe", "comma-separated texts no tag or event field may contain")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for the traces to pass the checks")
	flag.Parse()

	c := checker{
		tool:    *tool,
		calls:   *calls,
		want:    split(*want),
		retried: *retried,
		forbid:  split(*forbid),
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var problems []string
	var tree string
	for {
		traces, err := fetch(ctx, *query, *service)
		if err != nil {
			problems = []string{err.Error()}
		} else {
			problems, tree = c.check(traces)
		}
		if len(problems) == 0 {
			fmt.Print(tree)
			fmt.Printf("jaegercheck: ok: the traces of %s in Jaeger have the expected span tree\n", *service)
			return
		}
		select {
		case <-ctx.Done():
			fmt.Print(tree)
			fmt.Fprintf(os.Stderr, "jaegercheck: the traces of %s in Jaeger at %s fail %d check(s) after %v:\n", *service, *query, len(problems), *timeout)
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, "  -", p)
			}
			os.Exit(1)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// The JSON of Jaeger's /api/traces.
type (
	response struct {
		Data   []jtrace `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	jtrace struct {
		TraceID string  `json:"traceID"`
		Spans   []jspan `json:"spans"`
	}
	jspan struct {
		TraceID       string `json:"traceID"`
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		StartTime int64 `json:"startTime"` // µs
		Duration  int64 `json:"duration"`  // µs
		Tags      []kv  `json:"tags"`
		Logs      []struct {
			Timestamp int64 `json:"timestamp"`
			Fields    []kv  `json:"fields"`
		} `json:"logs"`
	}
	kv struct {
		Key   string `json:"key"`
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
)

func fetch(ctx context.Context, query, service string) ([]jtrace, error) {
	u := strings.TrimSuffix(query, "/") + "/api/traces?" + url.Values{
		"service": {service}, "limit": {"50"}, "lookback": {"1h"},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("GET %s: %s: %.200s", u, resp.Status, body)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("GET %s: %s", u, r.Errors[0].Msg)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return r.Data, nil
}

type checker struct {
	tool    string
	calls   int
	want    []string
	retried int
	forbid  []string
}

func tag(tags []kv, key string) (any, bool) {
	for _, t := range tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

func tagString(tags []kv, key string) string {
	v, _ := tag(tags, key)
	s, _ := v.(string)
	return s
}

func tagInt(tags []kv, key string) (int, bool) {
	v, ok := tag(tags, key)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		return int(n), true
	case string: // older Jaeger versions send int64 as strings
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}

func parentOf(s jspan) string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// findings are the problems check found, and the tree of the call spans
// it printed.
type findings struct {
	problems []string
	tree     strings.Builder
}

func (f *findings) fail(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

// check returns what is wrong with traces, and the tree of the call spans.
func (c checker) check(traces []jtrace) (problems []string, tree string) {
	var f findings
	callSpans, children := c.index(traces, &f)
	traceIDs := map[string]bool{}
	outcomes := map[string]bool{}
	retried := 0
	for i, s := range callSpans {
		traceIDs[s.TraceID] = true
		outcome, attempts := c.checkCall(fmt.Sprintf("call %d (%s)", i+1, s.SpanID), s, children[s.SpanID], &f)
		outcomes[outcome] = true
		if attempts > 1 {
			retried++
		}
	}
	if retried < c.retried {
		f.fail("%d call spans with retries; want at least %d", retried, c.retried)
	}
	for _, w := range c.want {
		if !outcomes[w] {
			f.fail("no call span has outcome %s", w)
		}
	}
	if len(traceIDs) > 1 {
		f.fail("the call spans are in %d traces; want one, the agent run's", len(traceIDs))
	}
	return f.problems, f.tree.String()
}

// index returns the call spans of c.tool in the order they started and the
// children of every span, and checks that no span holds a forbidden text.
func (c checker) index(traces []jtrace, f *findings) (callSpans []jspan, children map[string][]jspan) {
	callName := "execute_tool " + c.tool
	children = map[string][]jspan{}
	for _, t := range traces {
		for _, s := range t.Spans {
			if p := parentOf(s); p != "" {
				children[p] = append(children[p], s)
			}
			if s.OperationName == callName {
				callSpans = append(callSpans, s)
			}
			c.checkForbidden(s, f)
		}
	}
	slices.SortFunc(callSpans, func(a, b jspan) int { return int(a.StartTime - b.StartTime) })
	if len(callSpans) < c.calls {
		f.fail("%d %q spans; want at least %d", len(callSpans), callName, c.calls)
	}
	return callSpans, children
}

// checkForbidden fails every tag and event field of s that holds one of the
// forbidden texts.
func (c checker) checkForbidden(s jspan, f *findings) {
	for _, text := range c.forbid {
		for _, t := range s.Tags {
			if strings.Contains(fmt.Sprint(t.Value), text) {
				f.fail("span %q tag %s holds the raw error text %q", s.OperationName, t.Key, text)
			}
		}
		for _, l := range s.Logs {
			for _, t := range l.Fields {
				if strings.Contains(fmt.Sprint(t.Value), text) {
					f.fail("span %q event field %s holds the raw error text %q", s.OperationName, t.Key, text)
				}
			}
		}
	}
}

// checkCall checks the call span s, named name in the problems, with its
// children, prints it and its attempts to the tree, and returns its outcome
// ("ok" or its error.type) and its toolsafe.attempts.
func (c checker) checkCall(name string, s jspan, children []jspan, f *findings) (outcome string, attempts int) {
	attempts, ok := tagInt(s.Tags, "toolsafe.attempts")
	if !ok {
		f.fail("%s has no toolsafe.attempts", name)
	}
	errType := tagString(s.Tags, "error.type")
	status := tagString(s.Tags, "otel.status_code")
	outcome = "ok"
	if errType != "" {
		outcome = errType
		if status != "ERROR" {
			f.fail("%s has error.type %s but status %q; want ERROR", name, errType, status)
		}
	} else if status == "ERROR" {
		f.fail("%s has status ERROR but no error.type", name)
	}
	if tagString(s.Tags, "toolsafe.summary") == "" {
		f.fail("%s has no toolsafe.summary", name)
	}
	fmt.Fprintf(&f.tree, "%s  %s  attempts=%d  %s\n", s.OperationName, outcome, attempts, tagString(s.Tags, "toolsafe.summary"))
	checkAttempts(name, children, attempts, f)
	checkRetries(name, s, attempts, f)
	return outcome, attempts
}

// checkAttempts checks the attempt spans among a call's children: attempts
// of them, numbered from 1, each but the last failed; and prints them.
func checkAttempts(name string, children []jspan, attempts int, f *findings) {
	var tries []jspan
	for _, k := range children {
		if strings.HasPrefix(k.OperationName, "attempt ") {
			tries = append(tries, k)
		}
	}
	slices.SortFunc(tries, func(a, b jspan) int { return int(a.StartTime - b.StartTime) })
	if len(tries) != attempts {
		f.fail("%s has %d attempt spans; toolsafe.attempts says %d", name, len(tries), attempts)
	}
	for j, a := range tries {
		if want := fmt.Sprintf("attempt %d", j+1); a.OperationName != want {
			f.fail("%s: child %d is %q; want %q", name, j+1, a.OperationName, want)
		}
		n, _ := tagInt(a.Tags, "toolsafe.attempt")
		if n != j+1 {
			f.fail("%s: %s has toolsafe.attempt %d", name, a.OperationName, n)
		}
		et := tagString(a.Tags, "error.type")
		if j < len(tries)-1 && et == "" {
			f.fail("%s: %s was retried but has no error.type", name, a.OperationName)
		}
		line := "  " + a.OperationName
		if et != "" {
			line += "  " + et
			if r := tagString(a.Tags, "toolsafe.reason"); r != "" {
				line += ": " + r
			}
			if _, ok := tag(a.Tags, "toolsafe.retryable"); !ok {
				f.fail("%s: %s failed but has no toolsafe.retryable", name, a.OperationName)
			}
		}
		fmt.Fprintln(&f.tree, line)
	}
}

// checkRetries checks the retry events of the call span s: one before each
// attempt after the first, each with its delay.
func checkRetries(name string, s jspan, attempts int, f *findings) {
	retries := 0
	for _, l := range s.Logs {
		event := ""
		for _, fl := range l.Fields {
			if fl.Key == "event" {
				event, _ = fl.Value.(string)
			}
		}
		if event != "retry" {
			continue
		}
		retries++
		if _, ok := tag(l.Fields, "toolsafe.delay_s"); !ok {
			f.fail("%s: a retry event has no toolsafe.delay_s", name)
		}
	}
	// Every attempt after the first follows a retry; a last retry may
	// have been refused by a breaker or bulkhead before its attempt began.
	if attempts > 0 && (retries < attempts-1 || retries > attempts) {
		f.fail("%s has %d retry events for %d attempts; want %d (or %d if the last retry was refused)", name, retries, attempts, attempts-1, attempts)
	}
}
